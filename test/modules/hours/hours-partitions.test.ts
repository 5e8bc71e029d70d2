import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listPartitions } from '../../../src/db/partitions.ts';
import { listMeterLogs } from '../../../src/modules/hours/hours.repository.ts';
import { ListHoursQuery } from '../../../src/modules/hours/hours.schemas.ts';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { makeAsset } from '../../helpers/app/factories.ts';
import { plansOf, scansOf } from '../../helpers/db/query-plans.ts';

/** Meter logs partitioned by month of loggedAt: backdated months, idempotency across months, pruning. */
let t: TestApp;
let acme: TestTenant;
beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Partitioned');
});
afterAll(() => t.close());

const log = (body: Record<string, unknown>) => t.api.post('/api/v1/hours', acme.key, body);
const partitionNames = async () => (await listPartitions(t.db.sql, 'meter_logs')).map((p) => p.name);

describe('meter logs by month', () => {
  it('creates the month of a backdated reading on demand, with no DEFAULT partition, and finds it by id', async () => {
    const assetId = await makeAsset(t, acme.key, { nickname: 'Backdated' });
    const res = await log({ assetId, hoursReading: 10, loggedAt: '2019-03-04T10:00:00.000Z' });
    expect(res.statusCode).toBe(201);
    expect(await partitionNames()).toContain('meter_logs_2019_03');
    const [parent] = await t.db.sql.query<{ partdefid: number }>(
      `SELECT partdefid::int AS partdefid FROM pg_partitioned_table WHERE partrelid = 'meter_logs'::regclass`,
    );
    expect(parent.partdefid).toBe(0);
    const got = await t.api.get(`/api/v1/hours/${res.json().logId}`, acme.key);
    expect(got.statusCode).toBe(200);
    expect(got.json().hoursLog.loggedAt).toBe('2019-03-04T10:00:00.000Z');
  });

  it('answers a retried clientMutationId with the first reading, whatever month either names', async () => {
    const assetId = await makeAsset(t, acme.key, { nickname: 'Retried' });
    const first = await log({
      assetId,
      hoursReading: 20,
      loggedAt: '2019-05-06T08:00:00.000Z',
      clientMutationId: 'm-1',
    });
    expect(first.statusCode).toBe(201);
    // The device retries later without its timestamp: the server's now() falls in another month.
    const retry = await log({ assetId, hoursReading: 20, clientMutationId: 'm-1' });
    expect(retry.json()).toMatchObject({ logId: first.json().logId, replayed: true });
    const older = await log({
      assetId,
      hoursReading: 20,
      loggedAt: '2018-01-01T00:00:00.000Z',
      clientMutationId: 'm-1',
    });
    expect(older.json()).toMatchObject({ logId: first.json().logId, replayed: true });
    const rows = await t.db.sql.query(`SELECT id FROM meter_logs WHERE "orgId" = $1 AND "clientMutationId" = 'm-1'`, [
      acme.orgId,
    ]);
    expect(rows).toHaveLength(1);
  });

  it('records one reading for concurrent retries of one key stamped in different months', async () => {
    const assetId = await makeAsset(t, acme.key, { nickname: 'Racing' });
    const months = ['2019-07-01T00:00:00.000Z', '2019-08-01T00:00:00.000Z', '2019-09-01T00:00:00.000Z', undefined];
    const answers = await Promise.all(
      months.map((loggedAt) => log({ assetId, hoursReading: 30, loggedAt, clientMutationId: 'm-race' })),
    );
    const ids = new Set(answers.map((a) => a.json().logId));
    expect(ids.size).toBe(1);
    expect(answers.filter((a) => a.json().replayed === false)).toHaveLength(1);
  });

  it("reads one partition for a month's readings of one asset", async () => {
    const assetId = await makeAsset(t, acme.key, { nickname: 'Pruned' });
    for (const [i, at] of ['2020-01-15', '2020-02-15', '2020-03-15'].entries()) {
      expect((await log({ assetId, hoursReading: 40 + i, loggedAt: `${at}T12:00:00.000Z` })).statusCode).toBe(201);
    }
    const query = ListHoursQuery.parse({ assetId, since: '2020-02-01T00:00:00.000Z', limit: '50' });
    // The page's cursor bounds it from above: the month's last instant.
    const after: [Date, string] = [new Date('2020-02-29T23:59:59.999Z'), '~'];
    const [plan] = await plansOf(t.db, (sql) => listMeterLogs(sql, acme.orgId, query, after));
    const scanned = new Set(scansOf(plan, 'meter_logs').map((s) => s.Partition));
    expect([...scanned]).toEqual(['meter_logs_2020_02']);
    const rows = await listMeterLogs(t.db.sql, acme.orgId, query, after);
    expect(rows.map((r) => r.loggedAt.toISOString())).toEqual(['2020-02-15T12:00:00.000Z']);
    // The same month named as a range, as the reports ask for a period.
    const [range] = await plansOf(t.db, (sql) =>
      sql.query(`SELECT * FROM meter_logs WHERE "assetId" = $1 AND "loggedAt" >= $2 AND "loggedAt" < $3`, [
        assetId,
        '2020-02-01T00:00:00.000Z',
        '2020-03-01T00:00:00.000Z',
      ]),
    );
    expect(scansOf(range, 'meter_logs').map((s) => s.Partition)).toEqual(['meter_logs_2020_02']);
  });
});
