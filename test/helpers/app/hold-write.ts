import type { Tx } from '../../../src/db/transaction.ts';
import type { TestApp } from './test-app.ts';

/**
 * Runs `write` in a transaction that stays open until release() is called, so a request sent meanwhile
 * races an uncommitted row: on PostgreSQL its pre-check cannot see the row and only the unique index
 * stops it; on PGlite (one transaction at a time) the request waits and then sees the committed row.
 */
export async function holdWrite(t: TestApp, write: (tx: Tx) => Promise<unknown>) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let written!: () => void;
  const ready = new Promise<void>((resolve) => (written = resolve));
  const done = t.db.prisma.$transaction(
    async (tx) => {
      await write(tx);
      written();
      await released;
    },
    { maxWait: 15_000, timeout: 30_000 },
  );
  await ready;
  return {
    async release(afterMs = 300) {
      await new Promise((r) => setTimeout(r, afterMs));
      release();
      await done;
    },
  };
}
