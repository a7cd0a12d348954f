// @tier slow: kubectl renders the base and every overlay

import { describe, expect, it } from 'vitest';
import { type Deployment, gateway, portNumber, RENDERED, read } from './rendered.ts';

// What each rendering's pods run and may do: the project's image as built, as its user, non-root
// and read-only, every pod within the restricted Pod Security Standard, and other containers of the
// image set only what the file they run reads.

describe.each(RENDERED)('deploy/kubernetes/%s', (_name, objects) => {
  it('runs the image as built: its command, its port, its user, non-root and read-only', () => {
    const { pod, container } = gateway(objects);
    const dockerfile = read('Dockerfile');
    // The image's CMD (the flags the bench measured) runs as is.
    expect(container.command).toBeUndefined();
    expect(container.args).toBeUndefined();
    expect(dockerfile).toMatch(new RegExp(`^EXPOSE ${portNumber(container, 'http')}$`, 'm'));
    // USER node in the official node images is uid 1000, gid 1000.
    const stages = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((match) => match[1] as string);
    expect(stages.at(-1)).toMatch(/^node:/);
    expect([...dockerfile.matchAll(/^USER (\S+)$/gm)].map((match) => match[1])).toEqual(['node']);
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 1000,
      runAsGroup: 1000,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(container.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(container.securityContext.capabilities?.add).toBeUndefined();
    expect(container.securityContext.privileged ?? false).toBe(false);
    expect([pod.hostNetwork, pod.hostPID, pod.hostIPC].filter(Boolean)).toEqual([]);
    expect(pod.automountServiceAccountToken).toBe(false);
    // Every writable path is an emptyDir, /tmp among them.
    const volumes = new Map((pod.volumes ?? []).map((volume) => [volume.name, volume]));
    const mounts = container.volumeMounts ?? [];
    expect(mounts.map((mount) => mount.mountPath)).toContain('/tmp');
    for (const mount of mounts) expect(Object.keys(volumes.get(mount.name) ?? {})).toContain('emptyDir');
  });

  it('every pod meets the restricted Pod Security Standard, read-only, writing to emptyDir only', () => {
    const deployments = objects.filter((object): object is Deployment => object.kind === 'Deployment');
    for (const { metadata, spec } of deployments) {
      const pod = spec.template.spec;
      expect(pod.securityContext, metadata.name).toMatchObject({
        runAsNonRoot: true,
        seccompProfile: { type: 'RuntimeDefault' },
      });
      expect(pod.securityContext.runAsUser, metadata.name).toBeGreaterThan(0);
      expect([pod.hostNetwork, pod.hostPID, pod.hostIPC].filter(Boolean), metadata.name).toEqual([]);
      const volumes = new Map((pod.volumes ?? []).map((volume) => [volume.name, volume]));
      for (const container of pod.containers) {
        expect(container.securityContext, container.name).toMatchObject({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
        });
        expect(container.securityContext.capabilities?.add, container.name).toBeUndefined();
        for (const mount of container.volumeMounts ?? [])
          expect(Object.keys(volumes.get(mount.name) ?? {}), mount.mountPath).toContain('emptyDir');
      }
    }
    // A namespace in the rendering enforces the restricted standard.
    for (const namespace of objects.filter((object) => object.kind === 'Namespace')) {
      expect(namespace.metadata.labels?.['pod-security.kubernetes.io/enforce']).toBe('restricted');
    }
  });

  it('other containers of the project’s image run a file it holds and set only what that file reads', () => {
    const { deployment } = gateway(objects);
    const others = objects
      .filter((object): object is Deployment => object.kind === 'Deployment' && object !== deployment)
      .flatMap((object) => object.spec.template.spec.containers)
      .filter((container) => /(^|\/)pet-gateway:/.test(container.image));
    for (const container of others) {
      const [node, file, ...rest] = container.command ?? [];
      expect([node, rest]).toEqual(['node', []]);
      const source = read(file as string);
      const reads = new Set([...source.matchAll(/process\.env\.([A-Z_]+)/g)].map((match) => match[1]));
      expect((container.env ?? []).map((entry) => entry.name).filter((name) => !reads.has(name))).toEqual([]);
    }
  });
});
