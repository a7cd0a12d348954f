// @tier unit

import type { DestinationStream } from 'pino';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logging.ts';
import { logOperation, type OperationRecord } from '../../src/observability/operation-line.ts';
import { requestIdOf } from '../../src/observability/request-id.ts';

// The operation line is written as text, not through pino's object path, because one goes out per
// request: it must be the line pino itself would write for the same fields, byte for byte.

function capture(): { destination: DestinationStream; lines: string[] } {
  const lines: string[] = [];
  return {
    destination: { write: (text: string) => void lines.push(...text.split('\n').filter(Boolean)) },
    lines,
  };
}

/**
 * The line pino itself writes for the same record: a child logger (same bindings) is not one
 * createLogger made, so logOperation gives it the fields as an object, through pino's own path.
 */
function pinoLine(record: OperationRecord, status: number) {
  const { destination, lines } = capture();
  logOperation(createLogger('info', destination).child({}), record, status);
  return lines[0] as string;
}

const withoutTimes = (line: string) => {
  const value = JSON.parse(line) as Record<string, unknown>;
  expect(value.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  expect(typeof value.durationMs).toBe('number');
  return line.replace(/"time":"[^"]*"/, '"time":"T"').replace(/"durationMs":[\d.]+/, '"durationMs":0');
};

describe('the operation log line', () => {
  const records: OperationRecord[] = [
    { started: 0, requestId: requestIdOf(undefined), clientAddress: '127.0.0.1', operationType: 'query' },
    {
      started: 0,
      requestId: requestIdOf('trace-1.2:3'),
      clientAddress: 'fe80::1%eth0',
      operationName: 'Quoted"Name\\with\u2028odd\u0001chars',
      operationType: 'mutation',
      codes: ['BAD_USER_INPUT', 'UPSTREAM_ERROR'],
      upstreamCalls: () => 3,
    },
    {
      started: 0,
      requestId: requestIdOf('x'.repeat(128)),
      clientAddress: '"quoted"\\address',
      operationType: 'subscription',
      batch: { index: 2, size: 5, shared: true },
    },
  ];

  it.each(records.map((record, i) => [i, record] as const))(
    'is the line pino writes (record %i)',
    (_, record) => {
      const { destination, lines } = capture();
      logOperation(createLogger('info', destination), record, 200);
      expect(lines).toHaveLength(1);
      expect(withoutTimes(lines[0] as string)).toBe(withoutTimes(pinoLine(record, 200)));
    },
  );

  it('is these bytes: level, time, the service, the fields in their order, then msg', () => {
    const { destination, lines } = capture();
    logOperation(createLogger('info', destination), records[1] as OperationRecord, 400);
    expect(withoutTimes(lines[0] as string)).toBe(
      '{"level":30,"time":"T","service":"pet-gateway","requestId":"trace-1.2:3","clientAddress":"fe80::1%eth0",' +
        '"operationName":"Quoted\\"Name\\\\with\u2028odd\\u0001chars","operationType":"mutation","durationMs":0,' +
        '"upstreamCalls":3,"status":400,"outcome":"error","codes":["BAD_USER_INPUT","UPSTREAM_ERROR"],"msg":"operation"}',
    );
  });

  it('is not written below the info level', () => {
    const { destination, lines } = capture();
    logOperation(createLogger('warn', destination), records[0] as OperationRecord, 200);
    expect(lines).toHaveLength(0);
  });
});
