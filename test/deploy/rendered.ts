import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type KubeObject, renderKustomization } from '../support/kustomize.ts';

// deploy/kubernetes/, rendered by `kubectl kustomize` (test/support/kustomize.ts says when its own
// renderer stands in) once per worker, for every file that holds it to what the code, the image,
// the bench and the docs say. The renderings are shared: a check copies before it changes anything.

export const ROOT = new URL('../../', import.meta.url);
export const read = (path: string) => readFileSync(new URL(path, ROOT), 'utf8');
export const KUBERNETES = fileURLToPath(new URL('deploy/kubernetes/', ROOT));
export const OVERLAYS = readdirSync(`${KUBERNETES}overlays`);
export const RENDERED: [string, KubeObject[]][] = [
  ['base', renderKustomization(`${KUBERNETES}base`)],
  ...OVERLAYS.map((overlay): [string, KubeObject[]] => [
    `overlays/${overlay}`,
    renderKustomization(`${KUBERNETES}overlays/${overlay}`),
  ]),
];
export const DOCS = read('docs/kubernetes.md');

interface Probe {
  httpGet: { path: string; port: string | number };
  periodSeconds?: number;
  failureThreshold?: number;
}
export interface Container {
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
export interface Deployment extends KubeObject {
  spec: {
    replicas?: number;
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
  };
}

export function find<T extends KubeObject>(objects: KubeObject[], kind: string, name = 'pet-gateway'): T {
  const found = objects.find((object) => object.kind === kind && object.metadata.name === name);
  if (!found) throw new Error(`no ${kind}/${name}`);
  return found as T;
}

/** The gateway's Deployment, its one container, and the settings that container gets. */
export function gateway(objects: KubeObject[]) {
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
export function portNumber(container: Container, port: string | number): number | undefined {
  return typeof port === 'number'
    ? port
    : container.ports.find((entry) => entry.name === port)?.containerPort;
}

/** The `kubectl create secret` the docs tell an operator to run: its name and its values. */
export function documentedSecret(): { name: string; values: Record<string, string> } {
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
export function secretValues(
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
