// @tier integration

import { describe, expect, it } from 'vitest';
import { CASES } from './cases.ts';
import { renamedDocument } from './renamed.ts';
import { type Case, sendAlike, useThreeSides, warmUp } from './sides.ts';

// The lanes' corpus again, each document prepared as it is and then sent renamed: its aliases
// called otherwise and the text printed anew (renamed.ts), a text no side has seen, of a shape the
// defaults' fast lane has planned. That side serves it by shape (src/fast-lane/by-shape.ts) where
// the original is a plan's success; everything else, there and on the other sides, is Yoga's. The
// answers, upstream calls and log lines must be those of a gateway with the fast lane off.

const three = useThreeSides();

type Entry = Exclude<Case['body'], unknown[]>;

/** An entry whose document is sent as text, with that text renamed; undefined for any other. */
function renamedEntry(entry: Entry): Entry | undefined {
  const query = typeof entry.query === 'string' ? renamedDocument(entry.query) : undefined;
  return query === undefined ? undefined : { ...entry, query };
}

/**
 * The cases whose body is one document sent as text, with that text renamed; and the batches, each
 * entry sent as text renamed (an entry that is not stays as it is, prepared).
 */
const renamed = CASES.flatMap((c): Case[] => {
  if (!Array.isArray(c.body)) {
    const body = renamedEntry(c.body);
    return body === undefined ? [] : [{ ...c, warm: c.warm ?? c.body, body }];
  }
  const entries = (c.body as Entry[]).map((entry) => renamedEntry(entry));
  if (entries.every((entry) => entry === undefined)) return [];
  const body = entries.map((entry, i) => entry ?? (c.body as Entry[])[i]) as Case['body'];
  return [{ ...c, name: `${c.name}, its entries renamed`, warm: c.warm ?? c.body, body }];
});

/** A plan's success is served by shape; no shape stands for a document sent with a hash. */
const servedByShape = (c: Case) =>
  c.code === undefined &&
  !c.yogaOnly &&
  !c.unplanned &&
  [c.body].flat().every((entry) => (entry as { extensions?: unknown }).extensions === undefined);

describe('a renamed document is answered exactly as Yoga answers it', () => {
  it('holds most of the corpus', () => {
    expect(renamed.length).toBeGreaterThan(30);
    expect(renamed.filter(servedByShape).length).toBeGreaterThan(15);
    expect(renamed.filter((c) => Array.isArray(c.body) && servedByShape(c)).length).toBeGreaterThan(1);
  });

  it.each(renamed)('$name', async (c) => {
    const { upstream, yoga, compiled, fast } = three;
    const sides = [yoga, compiled, fast];
    await warmUp(sides, c);
    const before = { ...(fast.gateway.lanes?.served ?? { fast: 0, yoga: 0, planned: 0 }) };
    await sendAlike(upstream, sides, c);
    const byShape = servedByShape(c);
    const served = fast.gateway.lanes?.served ?? before;
    expect(served.fast - before.fast).toBe(byShape ? 1 : 0);
    expect(served.planned - before.planned).toBe(byShape ? 1 : 0);
  });
});
