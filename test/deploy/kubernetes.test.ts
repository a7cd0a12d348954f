// @tier slow: kubectl, and npm start with each overlay's settings

import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { loadConfig } from '../../src/config.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
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
import { npmStart } from '../support/npm-start.ts';
import { haveRedisServer, startRedis } from '../support/redis.ts';

// deploy/kubernetes/, rendered by `kubectl kustomize` (test/support/kustomize.ts says when its own
// renderer stands in), validated against the API's schemas, and held to what the code, the image
// and the bench say.

const ROOT = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, ROOT), 'utf8');
const KUBERNETES = fileURLToPath(new URL('deploy/kubernetes/', ROOT));
const OVERLAYS = readdirSync(`${KUBERNETES}overlays`);
const RENDERED: [string, KubeObject[]][] = [
  ['base', renderKustomization(`${KUBERNETES}base`)],
  ...OVERLAYS.map((overlay): [string, KubeObject[]] => [
    `overlays/${overlay}`,
    renderKustomization(`${KUBERNETES}overlays/${overlay}`),
  ]),
];
const DOCS = read('docs/kubernetes.md');
/** The namespace the ingress controller runs in (ingress-nginx's own manifests name it so). */
const INGRESS_NAMESPACE = 'ingress-nginx';

interface Probe {
  httpGet: { path: string; port: string | number };
  periodSeconds?: number;
  failureThreshold?: number;
}
interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  ports: { name?: string; containerPort: number }[];
  envFrom?: { configMapRef?: { name: string } }[];
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
  resources: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext: Record<string, unknown> & { capabilities?: { drop?: string[]; add?: string[] } };
  startupProbe: Probe;
  livenessProbe: Probe;
  readinessProbe: Probe;
  lifecycle?: { preStop?: { sleep?: { seconds: number } } };
  volumeMounts?: { name: string; mountPath: string }[];
}
interface PodSpec {
  terminationGracePeriodSeconds: number;
  automountServiceAccountToken?: boolean;
  securityContext: Record<string, unknown>;
  topologySpreadConstraints: {
    topologyKey: string;
    labelSelector: { matchLabels: Record<string, string> };
  }[];
  containers: Container[];
  volumes?: ({ name: string } & Record<string, unknown>)[];
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
}
interface Deployment extends KubeObject {
  spec: {
    replicas?: number;
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
  };
}
interface Peer {
  namespaceSelector?: { matchLabels?: Record<string, string> };
  podSelector?: { matchLabels?: Record<string, string> };
  ipBlock?: unknown;
}
interface Rule {
  from?: Peer[];
  to?: Peer[];
  ports?: { port: number | string; protocol?: string }[];
}

function find<T extends KubeObject>(objects: KubeObject[], kind: string, name = 'pet-gateway'): T {
  const found = objects.find((object) => object.kind === kind && object.metadata.name === name);
  if (!found) throw new Error(`no ${kind}/${name}`);
  return found as T;
}

/** The gateway's Deployment, its one container, and the settings that container gets. */
function gateway(objects: KubeObject[]) {
  const deployment = find<Deployment>(objects, 'Deployment');
  const pod = deployment.spec.template.spec;
  const [container] = pod.containers as [Container];
  const configMaps = (container.envFrom ?? []).map((source) => {
    if (!source.configMapRef) throw new Error('envFrom other than a ConfigMap');
    return find<KubeObject & { data: Record<string, string> }>(
      objects,
      'ConfigMap',
      source.configMapRef.name,
    );
  });
  const settings: Record<string, string> = Object.assign({}, ...configMaps.map((map) => map.data));
  const secretRefs = (container.env ?? []).flatMap((entry) =>
    entry.valueFrom?.secretKeyRef ? [{ env: entry.name, ...entry.valueFrom.secretKeyRef }] : [],
  );
  for (const entry of container.env ?? []) if (entry.value !== undefined) settings[entry.name] = entry.value;
  return { deployment, pod, container, settings, secretRefs };
}

/** A named container port as its number. */
function portNumber(container: Container, port: string | number): number | undefined {
  return typeof port === 'number'
    ? port
    : container.ports.find((entry) => entry.name === port)?.containerPort;
}

/**
 * The variables the configuration reads (src/config.ts and the readers in src/config/): each is
 * read as `reader(env, 'NAME', …)`.
 */
const CONFIG_SOURCES = [
  'src/config.ts',
  ...readdirSync(new URL('src/config/', ROOT)).map((name) => `src/config/${name}`),
];
const CONFIG_READS = new Set(
  CONFIG_SOURCES.flatMap((file) =>
    [...read(file).matchAll(/\(env, '([A-Z][A-Z0-9_]*)'/g)].map((match) => match[1] as string),
  ),
);
function unreadSettings(names: string[]): string[] {
  return names.filter((name) => !CONFIG_READS.has(name));
}

/** The `kubectl create secret` the docs tell an operator to run: its name and its values. */
function documentedSecret(): { name: string; values: Record<string, string> } {
  const name = /kubectl (?:-n \S+ )?create secret generic (\S+)/.exec(DOCS)?.[1];
  if (!name) throw new Error('docs/kubernetes.md shows no kubectl create secret generic');
  const values: Record<string, string> = {};
  for (const [, key, raw] of DOCS.matchAll(/--from-literal=([A-Z_]+)=("[^"]*"|\S+)/g)) {
    const value = (raw as string).replace(/^"|"$/g, '');
    // What `$(openssl rand -hex 32)` prints: 64 hex digits.
    values[key as string] = value === '$(openssl rand -hex 32)' ? 'a1'.repeat(32) : value;
  }
  return { name, values };
}

/** The variables a rendering's Secret references set: from its own Secrets, else what the docs create. */
function secretValues(
  objects: KubeObject[],
  refs: { env: string; name: string; key: string }[],
): Record<string, string> {
  const values: Record<string, string> = {};
  for (const ref of refs) {
    const secret = objects.find((object) => object.kind === 'Secret' && object.metadata.name === ref.name) as
      | (KubeObject & { stringData?: Record<string, string> })
      | undefined;
    const documented = documentedSecret();
    const value = secret ? secret.stringData?.[ref.key] : documented.values[ref.key];
    if (value === undefined) throw new Error(`no value for secret ${ref.name} key ${ref.key}`);
    values[ref.env] = value;
  }
  return values;
}

function matches(selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.entries(selector).every(([key, value]) => labels[key] === value);
}

/** The port a URL connects to. */
function urlPort(url: string): number {
  const parsed = new URL(url);
  if (parsed.port) return Number(parsed.port);
  return { 'https:': 443, 'http:': 80, 'redis:': 6379, 'rediss:': 6379 }[parsed.protocol] ?? 0;
}

/** Mebibytes of a Kubernetes memory quantity (Mi, Gi or M). */
function mebibytes(quantity: string): number {
  const [, amount, unit] = /^(\d+)(Mi|Gi|M)$/.exec(quantity) ?? [];
  if (!amount) throw new Error(`unexpected memory quantity ${quantity}`);
  return unit === 'Gi'
    ? Number(amount) * 1024
    : unit === 'M'
      ? (Number(amount) * 1e6) / 2 ** 20
      : Number(amount);
}

/** Cores of a Kubernetes CPU quantity ("1", "500m"). */
function cores(quantity: string): number {
  return quantity.endsWith('m') ? Number(quantity.slice(0, -1)) / 1000 : Number(quantity);
}

/** The gateway's rows of docs/performance.md's bench table. */
function benchRows(): { workload: string; cpuMicros: number; peakRssMiB: number }[] {
  const page = read('docs/performance.md');
  const header = page
    .split('\n')
    .find((line) => line.startsWith('| workload | upstream | target |'))
    ?.split('|')
    .map((cell) => cell.trim());
  if (!header) throw new Error('docs/performance.md has no bench table');
  const column = (name: string) => header.indexOf(name);
  return page
    .split('\n')
    .map((line) => line.split('|').map((cell) => cell.trim()))
    .filter((cells) => cells[column('target')] === 'gateway')
    .map((cells) => ({
      workload: cells[column('workload')] as string,
      cpuMicros: Number(cells[column('CPU µs/req')]),
      peakRssMiB: Number(cells[column('peak RSS MB')]),
    }));
}

/** A constant of src/main.ts, as written there (main.ts runs the gateway when imported). */
function mainConstant(pattern: RegExp): number {
  const match = pattern.exec(read('src/main.ts'));
  if (!match) throw new Error(`src/main.ts: ${pattern} not found`);
  return Number((match[1] as string).replace(/_/g, ''));
}

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

  it('sets only settings src/config.ts reads, with values it loads: one worker on 0.0.0.0', () => {
    const { container, settings, secretRefs } = gateway(objects);
    expect(unreadSettings([...Object.keys(settings), ...secretRefs.map((ref) => ref.env)])).toEqual([]);
    const config = loadConfig({ ...settings, ...secretValues(objects, secretRefs) });
    expect(config.host).toBe('0.0.0.0');
    expect(config.port).toBe(portNumber(container, 'http'));
    expect(config.workers).toBe(1);
    // Without it the embedded reference service would write data/petstore.db on a read-only root.
    expect(config.upstreamUrl).toBeDefined();
    expect(settings.PETSTORE_DB).toBeUndefined();
    // The ingress in front: its X-Forwarded-For is read, and no one else's.
    expect(config.trustedProxies.length).toBeGreaterThan(0);
    expect(config.trustedProxies.filter((entry) => /\/0$/.test(entry))).toEqual([]);
  });

  it('the Redis URL and the caller-key secret come from a Secret, never the ConfigMap', () => {
    const { settings, secretRefs } = gateway(objects);
    expect(secretRefs.map((ref) => ref.env).sort()).toEqual(['REDIS_KEY_SECRET', 'REDIS_URL']);
    expect(Object.keys(settings)).not.toContain('REDIS_URL');
    expect(Object.keys(settings)).not.toContain('REDIS_KEY_SECRET');
    // Where the rendering holds no Secret, docs/kubernetes.md creates it, with these keys.
    if (!objects.some((object) => object.kind === 'Secret')) {
      const documented = documentedSecret();
      for (const ref of secretRefs) {
        expect(ref.name).toBe(documented.name);
        expect(Object.keys(documented.values)).toContain(ref.key);
      }
    }
  });

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

  it('gives SIGTERM the time the drain takes: grace ≥ preStop + DRAIN_TIMEOUT_MS + the log flush', () => {
    const { pod, container } = gateway(objects);
    const drainMs = mainConstant(/const DRAIN_TIMEOUT_MS = ([\d_]+);/);
    const flushMs = mainConstant(/flushWithin\(([\d_]+)\)/);
    const preStop = container.lifecycle?.preStop?.sleep?.seconds ?? 0;
    // Long enough for endpoints to be removed before the gateway stops taking connections.
    expect(preStop).toBeGreaterThanOrEqual(5);
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(preStop + (drainMs + flushMs) / 1000);
  });

  it('ports match: PORT, the container port, the probes, the Service and the NetworkPolicy', () => {
    const { container, settings } = gateway(objects);
    const port = Number(settings.PORT);
    expect(portNumber(container, 'http')).toBe(port);
    for (const probe of [container.startupProbe, container.livenessProbe, container.readinessProbe]) {
      expect(portNumber(container, probe.httpGet.port)).toBe(port);
    }
    const service = find<KubeObject & { spec: { ports: { targetPort: string | number }[] } }>(
      objects,
      'Service',
    );
    for (const entry of service.spec.ports) expect(portNumber(container, entry.targetPort)).toBe(port);
    const policy = find<KubeObject & { spec: { ingress: Rule[] } }>(objects, 'NetworkPolicy');
    for (const rule of policy.spec.ingress) {
      for (const entry of rule.ports ?? []) expect(portNumber(container, entry.port)).toBe(port);
    }
  });

  it('the Service, PDB, HPA and NetworkPolicy select or target the Deployment’s pods, and only them', () => {
    const { deployment } = gateway(objects);
    const labels = deployment.spec.template.metadata.labels;
    expect(matches(deployment.spec.selector.matchLabels, labels)).toBe(true);
    // The HPA owns the replica count: an apply setting it would undo the HPA's scaling.
    expect(deployment.spec.replicas).toBeUndefined();
    const service = find<KubeObject & { spec: { selector: Record<string, string> } }>(objects, 'Service');
    const pdb = find<KubeObject & { spec: { selector: { matchLabels: Record<string, string> } } }>(
      objects,
      'PodDisruptionBudget',
    );
    const policy = find<KubeObject & { spec: { podSelector: { matchLabels: Record<string, string> } } }>(
      objects,
      'NetworkPolicy',
    );
    const selectors = [
      service.spec.selector,
      pdb.spec.selector.matchLabels,
      policy.spec.podSelector.matchLabels,
    ];
    for (const spread of deployment.spec.template.spec.topologySpreadConstraints)
      selectors.push(spread.labelSelector.matchLabels);
    const otherPods = objects
      .filter((object) => object.kind === 'Deployment' && object !== deployment)
      .map((object) => (object as Deployment).spec.template.metadata.labels);
    for (const selector of selectors) {
      expect(Object.keys(selector).length).toBeGreaterThan(0);
      expect(matches(selector, labels)).toBe(true);
      expect(otherPods.filter((other) => matches(selector, other))).toEqual([]);
    }
    const hpa = find<
      KubeObject & {
        spec: { scaleTargetRef: Record<string, string>; minReplicas: number; maxReplicas: number };
      }
    >(objects, 'HorizontalPodAutoscaler');
    expect(hpa.spec.scaleTargetRef).toEqual({
      apiVersion: deployment.apiVersion,
      kind: 'Deployment',
      name: deployment.metadata.name,
    });
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    expect(hpa.spec.maxReplicas).toBeGreaterThanOrEqual(hpa.spec.minReplicas);
    // Spread over nodes and zones.
    expect(
      deployment.spec.template.spec.topologySpreadConstraints.map((spread) => spread.topologyKey),
    ).toEqual(expect.arrayContaining(['kubernetes.io/hostname', 'topology.kubernetes.io/zone']));
  });

  it('NetworkPolicy: in from the ingress controller’s namespace only; out to DNS, upstream, Redis, OTLP only', () => {
    const { container, settings, secretRefs } = gateway(objects);
    const policy = find<KubeObject & { spec: { policyTypes: string[]; ingress: Rule[]; egress: Rule[] } }>(
      objects,
      'NetworkPolicy',
    );
    expect(policy.spec.policyTypes.sort()).toEqual(['Egress', 'Ingress']);
    expect(policy.spec.ingress).toHaveLength(1);
    const [rule] = policy.spec.ingress as [Rule];
    expect(rule.from).toEqual([
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': INGRESS_NAMESPACE } } },
    ]);
    expect(rule.ports?.map((entry) => portNumber(container, entry.port))).toEqual([Number(settings.PORT)]);

    // Every egress rule names its ports, and together they open exactly DNS and the destinations.
    for (const egress of policy.spec.egress) expect(egress.ports?.length).toBeGreaterThan(0);
    const opened = new Set(
      policy.spec.egress.flatMap((egress) =>
        (egress.ports ?? []).map((entry) => `${entry.port}/${entry.protocol ?? 'TCP'}`),
      ),
    );
    const secrets = secretValues(objects, secretRefs);
    const destinations = [settings.UPSTREAM_URL, secrets.REDIS_URL, settings.OTEL_EXPORTER_OTLP_ENDPOINT];
    expect(settings.UPSTREAM_URL && secrets.REDIS_URL).toBeTruthy();
    const needed = new Set([
      '53/UDP',
      '53/TCP',
      ...destinations.flatMap((url) => (url ? [`${urlPort(url)}/TCP`] : [])),
    ]);
    expect([...opened].sort()).toEqual([...needed].sort());
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

  it('sizes from the bench: memory over the worst peak RSS, one core, the HPA target in the docs', () => {
    const { container, settings } = gateway(objects);
    const rows = benchRows();
    const worstRss = Math.max(...rows.map((row) => row.peakRssMiB));
    const steady = rows.find((row) => row.workload === 'list20-steady');
    expect(worstRss).toBeGreaterThan(0);
    expect(steady?.cpuMicros).toBeGreaterThan(0);
    const { requests = {}, limits = {} } = container.resources;
    // Tracing loads the OpenTelemetry SDK: ~40 MB more (src/main.ts).
    const tracingMiB = settings.OTEL_EXPORTER_OTLP_ENDPOINT ? 40 : 0;
    // Client connections past the bench's 50, at the cap the settings give under a container's
    // usual `ulimit -n`: ~14 KB each when idle (2,000 kept-alive connections raised RSS by 27.5 MB,
    // measured 2026-11-25, docs/kubernetes.md).
    const { maxConnections } = loadConfig(
      { ...settings, ...secretValues(objects, gateway(objects).secretRefs) },
      { fileDescriptors: 1_048_576 },
    );
    const connectionsMiB = (maxConnections * 14) / 1024;
    expect(mebibytes(limits.memory as string)).toBeGreaterThanOrEqual(worstRss + tracingMiB + connectionsMiB);
    expect(requests.memory).toBe(limits.memory);
    // No CPU limit: CFS throttling only adds latency to a process that uses one core at most.
    expect(limits.cpu).toBeUndefined();
    const hpa = find<
      KubeObject & {
        spec: { metrics: { resource: { name: string; target: { averageUtilization: number } } }[] };
      }
    >(objects, 'HorizontalPodAutoscaler');
    const [metric] = hpa.spec.metrics;
    expect(metric?.resource.name).toBe('cpu');
    const target = metric?.resource.target.averageUtilization as number;
    expect(target).toBeLessThan(100);
    // The docs show the same arithmetic on the same figures.
    const perPod = Math.round(
      (cores(requests.cpu as string) * (target / 100) * 1e6) / (steady?.cpuMicros ?? 1),
    );
    expect(DOCS).toContain(`${steady?.cpuMicros} µs`);
    expect(DOCS).toContain(`${worstRss} MiB`);
    expect(DOCS).toContain(perPod.toLocaleString('en-US'));
  });

  it('its probe paths answer 200 on a gateway started with its settings, within the startup probe’s budget; without the upstream, only readiness fails', {
    timeout: 60_000,
  }, async () => {
    const { container, settings, secretRefs } = gateway(objects);
    const upstream = await startFakeUpstream();
    const redis = haveRedisServer('kubernetes probes') ? await startRedis() : undefined;
    // An OTLP collector that takes every export.
    const collector = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    });
    collector.listen(0, '127.0.0.1');
    await once(collector, 'listening');
    let upstreamClosed = false;
    const started = Date.now();
    const running = await npmStart({
      ...settings,
      ...secretValues(objects, secretRefs),
      // The addresses of this machine: loopback, a free port, local stand-ins for the others.
      HOST: '127.0.0.1',
      PORT: '0',
      UPSTREAM_URL: upstream.url,
      ...(redis ? { REDIS_URL: redis.url } : {}),
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
    });
    try {
      const startup = container.startupProbe;
      expect(Date.now() - started).toBeLessThan(
        (startup.periodSeconds ?? 10) * (startup.failureThreshold ?? 3) * 1000,
      );
      for (const probe of [startup, container.livenessProbe]) {
        const response = await fetch(`${running.origin}${probe.httpGet.path}`);
        expect(response.status, probe.httpGet.path).toBe(200);
      }
      // Readiness asks the upstream with a 1 s timeout, which a just-started process on a loaded
      // machine can miss: as the kubelet does, the pod is ready at the first 200 (asked every
      // 0.5 s here, for up to 10 s).
      const readiness = `${running.origin}${container.readinessProbe.httpGet.path}`;
      let readyStatus = 0;
      for (const until = Date.now() + 10_000; readyStatus !== 200 && Date.now() < until; ) {
        if (readyStatus !== 0) await new Promise((resolve) => setTimeout(resolve, 500));
        readyStatus = (await fetch(readiness)).status;
      }
      expect(readyStatus, container.readinessProbe.httpGet.path).toBe(200);
      // The upstream gone: readiness takes the pod out of the Service; liveness leaves it running
      // (a restart would not bring the upstream back). Past the 1.5 s a readiness answer is reused.
      await upstream.close();
      upstreamClosed = true;
      await new Promise((resolve) => setTimeout(resolve, 1600));
      const ready = await fetch(`${running.origin}${container.readinessProbe.httpGet.path}`);
      const live = await fetch(`${running.origin}${container.livenessProbe.httpGet.path}`);
      expect([ready.status, live.status]).toEqual([503, 200]);
    } finally {
      await running.stop();
      await redis?.stop();
      if (!upstreamClosed) await upstream.close();
      collector.close();
    }
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
  it('a misspelt setting is one src/config.ts does not read', () => {
    expect(CONFIG_READS.size).toBeGreaterThan(30);
    expect(unreadSettings(['UPSTREAM_URL', 'UPSTREAM_ULR', 'TRUSTED_PROXY'])).toEqual([
      'UPSTREAM_ULR',
      'TRUSTED_PROXY',
    ]);
  });

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
