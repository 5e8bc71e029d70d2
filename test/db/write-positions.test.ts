import { describe, expect, it } from 'vitest';
import { fromSortable, parseLsn, sortableLsn } from '../../src/db/wal-position.ts';
import { memoryWritePositions } from '../../src/db/write-positions.ts';
import { loadConfig } from '../../src/config.ts';
import { withTestKeys } from '../helpers/run/test-env.ts';

describe('write positions', () => {
  it('reads WAL positions exactly and orders their stored text as numbers', () => {
    expect(parseLsn('16/B374D848')).toBe((0x16n << 32n) + 0xb374d848n);
    expect(parseLsn('0/0')).toBe(0n);
    expect(parseLsn('nonsense')).toBeNull();
    const small = sortableLsn(parseLsn('0/FFFFFFFF')!);
    const big = sortableLsn(parseLsn('1/0')!);
    expect(small < big).toBe(true);
    expect(fromSortable(big)).toBe(1n << 32n);
  });

  it('keeps the higher position when processes record out of order, and forgets it after an hour', async () => {
    let now = 0;
    const positions = memoryWritePositions(() => now);
    await positions.raise('org-a', 200n);
    await positions.raise('org-a', 100n);
    expect(await positions.get('org-a')).toBe(200n);
    expect(await positions.get('org-b')).toBe(0n);
    now += 3_600_001;
    await positions.raise('org-b', 5n);
    expect(await positions.get('org-a')).toBe(0n);
    expect(await positions.get('org-b')).toBe(5n);
  });
});

describe('DATABASE_REPLICA_URLS', () => {
  it('is a list of PostgreSQL URLs beside DATABASE_URL, with a 5 s lag limit by default', () => {
    const config = loadConfig(
      withTestKeys({
        DATABASE_URL: 'postgresql://app@primary/fleet',
        DATABASE_REPLICA_URLS: 'postgresql://app@r1/fleet, postgresql://app@r2:5433/fleet',
      }),
    );
    expect(config.replicas).toEqual({
      urls: ['postgresql://app@r1/fleet', 'postgresql://app@r2:5433/fleet'],
      maxLagMs: 5_000,
    });
    expect(() => loadConfig(withTestKeys({ DATABASE_REPLICA_URLS: 'postgresql://app@r1/fleet' }))).toThrow(
      /DATABASE_URL too/,
    );
    expect(() =>
      loadConfig(withTestKeys({ DATABASE_URL: 'postgresql://a@p/f', DATABASE_REPLICA_URLS: 'http://x' })),
    ).toThrow(/postgresql:\/\/ URLs/);
    expect(loadConfig(withTestKeys({})).replicas.urls).toEqual([]);
  });
});
