// @tier slow: kubectl renders the base and every overlay

import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../support/kustomize.ts';
import { type Deployment, find, gateway, portNumber, RENDERED, secretValues } from './rendered.ts';

// How each rendering's objects reach the gateway's pods and what those pods may reach: ports agree,
// selectors pick the Deployment's pods and no others, and the NetworkPolicy opens only what the
// settings name.

/** The namespace the ingress controller runs in (ingress-nginx's own manifests name it so). */
const INGRESS_NAMESPACE = 'ingress-nginx';

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

function matches(selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.entries(selector).every(([key, value]) => labels[key] === value);
}

/** The port a URL connects to. */
function urlPort(url: string): number {
  const parsed = new URL(url);
  if (parsed.port) return Number(parsed.port);
  return { 'https:': 443, 'http:': 80, 'redis:': 6379, 'rediss:': 6379 }[parsed.protocol] ?? 0;
}

describe.each(RENDERED)('deploy/kubernetes/%s', (_name, objects) => {
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
});

// The NetworkPolicy's own rules, beside the ports and selectors above.
describe.each(RENDERED)('deploy/kubernetes/%s', (_name, objects) => {
  it('NetworkPolicy: in from the ingress controller’s namespace only; out to DNS, upstream, Redis, OTLP only', () => {
    const { container, settings, secretRefs } = gateway(objects);
    const policy = find<KubeObject & { spec: { policyTypes: string[]; ingress: Rule[]; egress: Rule[] } }>(
      objects,
      'NetworkPolicy',
    );
    expect([...policy.spec.policyTypes].sort()).toEqual(['Egress', 'Ingress']);
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
});
