import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';

/**
 * The part of kustomize that deploy/kubernetes/ uses, so tests can render an overlay without
 * kubectl (the npm registry has none): `resources` (files and directories), `namespace`, `images`
 * and `patches` given by `path` (strategic merge patches naming their target by kind and name).
 * Anything else in a kustomization, or a patch this merge cannot apply as kustomize would, throws:
 * an overlay stays within what is rendered here, or its test fails.
 */

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

const KUSTOMIZATION_FIELDS = new Set(['apiVersion', 'kind', 'resources', 'namespace', 'images', 'patches']);

/** Kinds without a namespace: the namespace transformer leaves them alone. */
const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'PriorityClass']);

/**
 * Lists a strategic merge patch merges item by item, by this key (the API's patchMergeKey). Other
 * lists in a patch replace the whole list, as they do in kustomize for fields without a merge key
 * (a NetworkPolicy's `ingress` and `egress`, a container's `args`), but only those named in
 * REPLACED_LISTS: any list not named here could have a merge key this merge does not know.
 */
const MERGE_KEYS: Record<string, string> = {
  containers: 'name',
  initContainers: 'name',
  env: 'name',
  volumes: 'name',
  volumeMounts: 'mountPath',
};
const REPLACED_LISTS = new Set(['ingress', 'egress', 'args', 'command', 'policyTypes']);

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isObject(value: unknown): value is Record<string, Json> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `patch` merged into `target` as a strategic merge patch would (within the subset above). */
export function strategicMerge(target: Json, patch: Json, path = ''): Json {
  if (!isObject(patch) || !isObject(target)) return patch;
  const merged: Record<string, Json> = { ...target };
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith('$')) throw new Error(`${path}/${key}: patch directives are not rendered here`);
    if (value === null) {
      delete merged[key];
    } else if (Array.isArray(value)) {
      merged[key] = mergeList(key, merged[key], value, `${path}/${key}`);
    } else {
      merged[key] = key in merged ? strategicMerge(merged[key] as Json, value, `${path}/${key}`) : value;
    }
  }
  return merged;
}

function mergeList(field: string, target: Json | undefined, patch: Json[], path: string): Json[] {
  const key = MERGE_KEYS[field];
  if (key === undefined) {
    if (!REPLACED_LISTS.has(field))
      throw new Error(`${path}: a list this merge does not know how kustomize patches`);
    return patch;
  }
  const items = Array.isArray(target) ? [...target] : [];
  for (const item of patch) {
    if (!isObject(item) || typeof item[key] !== 'string')
      throw new Error(`${path}: every item needs its merge key "${key}"`);
    const at = items.findIndex((existing) => isObject(existing) && existing[key] === item[key]);
    if (at === -1) items.push(item);
    else items[at] = strategicMerge(items[at] as Json, item, `${path}/${item[key]}`);
  }
  return items;
}

/** The YAML documents of one file, empty documents left out. */
export function readObjects(file: string): KubeObject[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((document) => {
      if (document.errors.length > 0) throw new Error(`${file}: ${document.errors[0]?.message}`);
      return document.toJS() as KubeObject | null;
    })
    .filter((object): object is KubeObject => object !== null);
}

interface Kustomization {
  resources?: string[];
  namespace?: string;
  images?: { name: string; newName?: string; newTag?: string }[];
  patches?: { path?: string }[];
}

/** What `kubectl kustomize <dir>` prints, as objects, for kustomizations within the subset. */
export function render(dir: string): KubeObject[] {
  const [kustomization] = readObjects(join(dir, 'kustomization.yaml')) as unknown as Kustomization[];
  if (!kustomization) throw new Error(`${dir}: empty kustomization.yaml`);
  for (const field of Object.keys(kustomization)) {
    if (!KUSTOMIZATION_FIELDS.has(field)) throw new Error(`${dir}: "${field}" is not rendered here`);
  }
  let objects: KubeObject[] = [];
  for (const resource of kustomization.resources ?? []) {
    const path = resolve(dir, resource);
    if (!existsSync(path)) throw new Error(`${dir}: no resource ${resource}`);
    objects.push(...(statSync(path).isDirectory() ? render(path) : readObjects(path)));
  }
  for (const entry of kustomization.patches ?? []) {
    if (entry.path === undefined || Object.keys(entry).length !== 1)
      throw new Error(`${dir}: only patches given by path are rendered here`);
    for (const patch of readObjects(resolve(dir, entry.path))) {
      const at = objects.findIndex(
        (object) => object.kind === patch.kind && object.metadata.name === patch.metadata.name,
      );
      if (at === -1)
        throw new Error(`${entry.path}: patches ${patch.kind}/${patch.metadata.name}, which is not rendered`);
      objects[at] = strategicMerge(objects[at] as unknown as Json, patch as unknown as Json) as KubeObject;
    }
  }
  const { namespace } = kustomization;
  if (namespace !== undefined) {
    objects = objects.map((object) =>
      CLUSTER_SCOPED.has(object.kind) ? object : { ...object, metadata: { ...object.metadata, namespace } },
    );
  }
  for (const image of kustomization.images ?? []) {
    for (const container of objects.flatMap(podContainers)) {
      const [name, tag] = splitImage(container.image);
      if (name !== image.name) continue;
      container.image = `${image.newName ?? name}:${image.newTag ?? tag}`;
    }
  }
  return objects;
}

function splitImage(image: string): [string, string] {
  const colon = image.lastIndexOf(':');
  return colon > image.lastIndexOf('/') ? [image.slice(0, colon), image.slice(colon + 1)] : [image, 'latest'];
}

/** The containers of a workload's pod template (none for other kinds). */
export function podContainers(object: KubeObject): { name: string; image: string }[] {
  const spec = (object.spec as { template?: { spec?: { containers?: { name: string; image: string }[] } } })
    ?.template?.spec;
  return spec?.containers ?? [];
}

/**
 * `kubectl kustomize` is what operators run: the tests render with it when this machine's kubectl
 * has kustomize v4 or later (kubectl 1.21+). Debian bookworm's own kubectl (1.20, kustomize v2)
 * cannot read `patches` given by path, so on such a machine, or one without kubectl, `render`
 * above stands in, and test/deploy/kubernetes.test.ts holds the two to the same objects wherever
 * both run.
 */
export const KUBECTL_KUSTOMIZE: { usable: boolean; why: string } = (() => {
  const version = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8', timeout: 20_000 });
  if (version.error || version.status !== 0) return { usable: false, why: 'no kubectl on this machine' };
  const kustomize = /Kustomize Version: v(\d+)/.exec(version.stdout)?.[1];
  if (kustomize === undefined || Number(kustomize) < 4)
    return {
      usable: false,
      why: `kubectl's kustomize is older than v4: ${version.stdout.trim().split('\n')[0]}`,
    };
  return { usable: true, why: `kubectl kustomize v${kustomize}` };
})();

/** An overlay (or the base) as `kubectl kustomize DIR` prints it. */
export function kubectlRender(dir: string): KubeObject[] {
  const result = spawnSync('kubectl', ['kustomize', dir], { encoding: 'utf8', timeout: 60_000 });
  if (result.error || result.status !== 0)
    throw new Error(`kubectl kustomize ${dir}: ${result.error?.message ?? result.stderr}`);
  return parseAllDocuments(result.stdout).map((document) => document.toJS() as KubeObject);
}

/** The objects an operator's `kubectl apply -k DIR` sends: kubectl's rendering, or `render`'s. */
export function renderKustomization(dir: string): KubeObject[] {
  return KUBECTL_KUSTOMIZE.usable ? kubectlRender(dir) : render(dir);
}
