import { afterAll, beforeAll, beforeEach } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from './fake-upstream.ts';
import { type GatewayTestOptions, type RunningGateway, startGateway } from './gateway.ts';

export interface GatewayFixtureOptions {
  /** Keys the tests' upstream accepts. */
  tokens: readonly string[];
  /** Fills the upstream before the gateway starts (pets per key). */
  seed?: (upstream: FakeUpstream) => void;
  /** How the gateway is started; the upstream's URL is filled in. */
  gateway?: Omit<GatewayTestOptions, 'upstreamUrl'>;
}

/**
 * The tests' usual pair: the fake upstream (real HTTP on 127.0.0.1) and the real gateway in front
 * of it, started once for the file and closed after it. Before each test the upstream's request
 * log and faults are cleared, so each test reads only its own calls. `ready` receives both once
 * they run, e.g. `useGateway({ tokens: [TOKEN] }, (started) => ({ upstream, gateway } = started))`.
 */
export function useGateway(
  options: GatewayFixtureOptions,
  ready: (started: { upstream: FakeUpstream; gateway: RunningGateway }) => void,
): void {
  let upstream: FakeUpstream | undefined;
  let gateway: RunningGateway | undefined;
  beforeAll(async () => {
    upstream = await startFakeUpstream();
    for (const token of options.tokens) upstream.tokens.add(token);
    options.seed?.(upstream);
    gateway = await startGateway({ ...options.gateway, upstreamUrl: upstream.url });
    ready({ upstream, gateway });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });
  beforeEach(() => {
    if (!upstream) return;
    upstream.requests.length = 0;
    upstream.clearFaults();
  });
}
