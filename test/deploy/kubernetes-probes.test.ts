// @tier ci: kubectl, and npm start with each overlay's settings, a third of a minute: past what npm test's 5 minutes leave

import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { npmStart } from '../support/npm-start.ts';
import { haveRedisServer, startRedis } from '../support/redis.ts';
import { gateway, RENDERED, secretValues } from './rendered.ts';

// Each rendering's probes against a gateway started as `npm start` starts it, with that rendering's
// settings and local stand-ins for what it connects to.

describe.each(RENDERED)('deploy/kubernetes/%s', (_name, objects) => {
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
