// @tier integration

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logging.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { post } from '../support/graphql.ts';

let upstream: FakeUpstream;
let gateway: RunningGateway;
const lines: string[] = [];

beforeAll(async () => {
  upstream = await startFakeUpstream();
  const metrics = createMetrics();
  const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
  gateway = await startGateway({ upstreamUrl: upstream.url, gateway: { logger, metrics } });
});
afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

const errorSeries = async () =>
  (await (await fetch(`${gateway.origin}/metrics`)).text())
    .split('\n')
    .filter((line) => line.startsWith('pet_gateway_errors_total{'));

describe('pet_gateway_errors_total names what the client saw (#39 item 3)', () => {
  it('counts a document that does not validate as GRAPHQL_VALIDATION_FAILED, not as an internal error', async () => {
    const answer = await post(gateway.url, { query: 'query V { nope }' });
    expect(answer.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    const series = await errorSeries();
    expect(series.join('\n')).toMatch(
      /operationName="V",code="GRAPHQL_VALIDATION_FAILED",phase="validate"\} 1/,
    );
    expect(series.join('\n')).not.toContain('INTERNAL_SERVER_ERROR');
  });

  it('counts a document that does not parse as GRAPHQL_PARSE_FAILED', async () => {
    const answer = await post(gateway.url, { query: '{ pets(' });
    expect(answer.body.errors[0].extensions.code).toBe('GRAPHQL_PARSE_FAILED');
    const series = await errorSeries();
    expect(series.join('\n')).toMatch(/code="GRAPHQL_PARSE_FAILED",phase="parse"\} 1/);
    expect(series.join('\n')).not.toContain('INTERNAL_SERVER_ERROR');
  });
});
