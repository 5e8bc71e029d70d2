import { describe, expect, it } from 'vitest';
import type { Claims, RecordedOutcome } from '../../src/delivery/claims.ts';
import { createOutcomeWriter } from '../../src/delivery/outcome-writer.ts';
import { silentLogger } from '../helpers/delivery/harness.ts';

const outcome = (id: string): RecordedOutcome => ({
  id,
  status: 'DELIVERED',
  attempts: 1,
  attemptAt: new Date(),
  retryInSec: null,
  responseStatus: 200,
  responseBody: 'ok',
  error: null,
});

/** A claims double whose record() answers when the test says so. */
function fakeClaims(fail = false) {
  const statements: string[][] = [];
  const claims = {
    record: async (rows: RecordedOutcome[]) => {
      statements.push(rows.map((r) => r.id));
      if (fail) throw new Error('database gone');
      return new Set(rows.map((r) => r.id));
    },
  } as unknown as Claims;
  return { claims, statements };
}

describe('outcome writer', () => {
  it('writes the outcomes of one window in one statement', async () => {
    const { claims, statements } = fakeClaims();
    const writer = createOutcomeWriter(claims, silentLogger());
    const written = await Promise.all(['a', 'b', 'c'].map((id) => writer.record(outcome(id))));
    expect(written).toEqual([true, true, true]);
    expect(statements).toEqual([['a', 'b', 'c']]);
  });

  it('flush() (shutdown) writes what is waiting at once, before its timer', async () => {
    const { claims, statements } = fakeClaims();
    const writer = createOutcomeWriter(claims, silentLogger());
    const pending = writer.record(outcome('late'));
    await writer.flush();
    expect(statements).toEqual([['late']]);
    await expect(pending).resolves.toBe(true);
  });

  it('reports a failed write as not written (the row is re-sent after its lease, never recorded twice)', async () => {
    const { claims } = fakeClaims(true);
    const writer = createOutcomeWriter(claims, silentLogger());
    const pending = writer.record(outcome('x'));
    await writer.flush();
    await expect(pending).resolves.toBe(false);
  });
});
