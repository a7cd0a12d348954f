// @tier slow: kubectl renders the base and every overlay

import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { unknownFields, validateObject } from '../support/kube-schema.ts';
import {
  type Json,
  KUBECTL_KUSTOMIZE,
  type KubeObject,
  kubectlRender,
  podContainers,
  render,
  renderKustomization,
  strategicMerge,
} from '../support/kustomize.ts';
import { type Deployment, DOCS, find, KUBERNETES, OVERLAYS, RENDERED, read } from './rendered.ts';

// deploy/kubernetes/ as kubectl renders it: every object, and the Ingress docs/kubernetes.md shows,
// validates against the API's schemas; and the checks themselves: validation catches a misspelt
// field, and the stand-in renderer gives what kubectl kustomize gives. What the objects say is held
// to the code, the image and the bench in kubernetes-*.test.ts beside this file.

describe.each(RENDERED)('deploy/kubernetes/%s', (_name, objects) => {
  it('every object validates against the Kubernetes API schemas (kubernetes-models)', {
    timeout: 60_000,
  }, async () => {
    expect(objects.map((object) => object.kind)).toEqual(
      expect.arrayContaining([
        'ConfigMap',
        'Deployment',
        'Service',
        'HorizontalPodAutoscaler',
        'PodDisruptionBudget',
        'NetworkPolicy',
      ]),
    );
    for (const object of objects) await validateObject(object);
  });

  it('every field is one the API has (a misspelt field would be dropped silently)', {
    timeout: 60_000,
  }, () => {
    expect(unknownFields(objects)).toEqual([]);
  });
});

describe('docs/kubernetes.md', () => {
  it('its Ingress validates and routes /graphql to the Service’s port', { timeout: 60_000 }, async () => {
    const shown = [...DOCS.matchAll(/```yaml\n([\s\S]*?)```/g)].map(
      (match) => parseYaml(match[1] as string) as KubeObject,
    );
    const ingress = shown.find((object) => object.kind === 'Ingress') as KubeObject & {
      spec: {
        rules: { http: { paths: { path: string; backend: { service: Record<string, unknown> } }[] } }[];
      };
    };
    expect(ingress).toBeDefined();
    await validateObject(ingress);
    expect(unknownFields([ingress])).toEqual([]);
    const [, production] = RENDERED.find(([name]) => name === 'overlays/production') as [
      string,
      KubeObject[],
    ];
    const service = find<KubeObject & { spec: { ports: { name: string }[] } }>(production, 'Service');
    expect(ingress.metadata.namespace).toBe(service.metadata.namespace);
    const paths = ingress.spec.rules.flatMap((rule) => rule.http.paths);
    expect(paths.map((path) => path.path)).toEqual(['/graphql']);
    for (const path of paths) {
      expect(path.backend.service).toEqual({
        name: service.metadata.name,
        port: { name: service.spec.ports[0]?.name },
      });
    }
  });
});
describe('the checks themselves', () => {
  it('a misspelt field or a wrong value fails validation', { timeout: 60_000 }, async () => {
    const [, base] = RENDERED[0] as [string, KubeObject[]];
    const deployment = structuredClone(find<Deployment>(base, 'Deployment'));
    (deployment.spec.template.spec.containers[0] as unknown as Record<string, unknown>).readinesProbe = {};
    expect(unknownFields([deployment]).join('\n')).toMatch(/readinesProbe/);
    const wrong = structuredClone(find<Deployment>(base, 'Deployment'));
    (wrong.spec.template.spec.containers[0] as unknown as Record<string, unknown>).imagePullPolicy =
      'Sometimes';
    await expect(validateObject(wrong)).rejects.toThrow(/imagePullPolicy/);
  });

  it('the merge patches maps, lists by their merge key, replaces keyless lists, refuses the rest', () => {
    const target: Json = {
      spec: {
        containers: [
          { name: 'a', image: 'x:1', env: [{ name: 'A', value: '1' }] },
          { name: 'b', image: 'y:1' },
        ],
        egress: [{ ports: [{ port: 1 }] }],
        replicas: 2,
      },
    };
    expect(
      strategicMerge(target, {
        spec: {
          containers: [{ name: 'a', env: [{ name: 'B', value: '2' }] }],
          egress: [{ ports: [{ port: 2 }] }],
          replicas: null,
        },
      }),
    ).toEqual({
      spec: {
        containers: [
          {
            name: 'a',
            image: 'x:1',
            env: [
              { name: 'A', value: '1' },
              { name: 'B', value: '2' },
            ],
          },
          { name: 'b', image: 'y:1' },
        ],
        egress: [{ ports: [{ port: 2 }] }],
      },
    });
    // A container's ports merge by containerPort in kustomize: not rendered here, so refused.
    expect(() => strategicMerge(target, { spec: { containers: [{ name: 'a', ports: [] }] } })).toThrow(
      /does not know/,
    );
    expect(() => strategicMerge(target, { spec: { $patch: 'replace' } })).toThrow(/directives/);
  });

  it.skipIf(!KUBECTL_KUSTOMIZE.usable)(
    'the stand-in renderer gives the objects kubectl kustomize gives, for the base and every overlay',
    () => {
      const key = (object: KubeObject) =>
        `${object.kind}/${object.metadata.namespace ?? ''}/${object.metadata.name}`;
      const sorted = (objects: KubeObject[]) => [...objects].sort((a, b) => key(a).localeCompare(key(b)));
      for (const dir of ['base', ...OVERLAYS.map((overlay) => `overlays/${overlay}`)]) {
        expect(sorted(render(`${KUBERNETES}${dir}`)), dir).toEqual(
          sorted(kubectlRender(`${KUBERNETES}${dir}`)),
        );
      }
    },
  );

  it('renders namespace, images and patches as kustomize does', () => {
    const production = renderKustomization(`${KUBERNETES}overlays/production`);
    const base = renderKustomization(`${KUBERNETES}base`);
    const [container] = podContainers(find(production, 'Deployment'));
    const [baseContainer] = podContainers(find(base, 'Deployment'));
    expect(baseContainer?.image).toBe(`pet-gateway:${JSON.parse(read('package.json')).version}`);
    expect(container?.image).toMatch(/^registry\.example\.com\/pet-gateway:/);
    for (const object of production) {
      if (object.kind !== 'Namespace') expect(object.metadata.namespace).toBe('pet-gateway');
    }
    expect(find(production, 'Namespace').metadata.name).toBe('pet-gateway');
    const hpa = (objects: KubeObject[]) =>
      find<KubeObject & { spec: { maxReplicas: number; minReplicas: number } }>(
        objects,
        'HorizontalPodAutoscaler',
      ).spec;
    // The patch changes what it names, and keeps the rest.
    expect(hpa(production).maxReplicas).not.toBe(hpa(base).maxReplicas);
    expect(hpa(production).minReplicas).toBe(hpa(base).minReplicas);
  });
});
