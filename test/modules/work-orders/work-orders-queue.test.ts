import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { onPostgres } from '../../helpers/db/test-database.ts';
import { holdWrite } from '../../helpers/app/hold-write.ts';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('work-order numbers', () => {
  it('are 1..N without gaps or duplicates under 60 concurrent creates over HTTP, per organisation', async () => {
    const acme = await t.tenant('Acme');
    const other = await t.tenant('Other');
    const N = 60;
    const [mine, theirs] = await Promise.all([
      Promise.all(
        Array.from({ length: N }, (_, i) => t.api.post('/api/v1/work-orders', acme.key, { title: `Job ${i}` })),
      ),
      Promise.all(
        Array.from({ length: 10 }, (_, i) => t.api.post('/api/v1/work-orders', other.key, { title: `Their ${i}` })),
      ),
    ]);
    expect(mine.map((r) => r.statusCode)).toEqual(Array(N).fill(201));
    const numbers = mine.map((r) => r.json().number as number).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: N }, (_, i) => i + 1));
    const stored = await t.db.prisma.workOrder.findMany({
      where: { orgId: acme.orgId },
      select: { number: true },
      orderBy: { number: 'asc' },
    });
    expect(stored.map((w) => w.number)).toEqual(numbers);
    expect(theirs.map((r) => r.json().number as number).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 10 }, (_, i) => i + 1),
    );
  });

  it.skipIf(!onPostgres)(
    "a burst of creates in one organisation waits in the process, not on the other tenants' connections",
    async () => {
      const busy = await t.tenant('Burst');
      const other = await t.tenant('Bystander');
      // Another transaction holds Burst's number lock, so its creates cannot finish until it is released.
      const held = await holdWrite(
        t,
        (tx) => tx.$executeRaw`SELECT 1 FROM organizations WHERE id = ${busy.orgId} FOR UPDATE`,
      );
      // More creates than the pool (10 connections, one of them the hold) has connections.
      const creates = Array.from({ length: 15 }, (_, i) =>
        t.api.post('/api/v1/work-orders', busy.key, { title: `Burst ${i}` }),
      );
      await new Promise((r) => setTimeout(r, 200));
      const [waitingAtDb] = await t.db.sql.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      // One create holds a slot waiting for the lock and the next waits behind it; the rest wait in the process.
      expect(waitingAtDb.n).toBeLessThanOrEqual(2);
      // Without that, the blocked creates held every free connection and this request got 503 after the pool wait.
      const started = Date.now();
      const list = await t.api.get('/api/v1/work-orders', other.key);
      expect(list.statusCode).toBe(200);
      expect(Date.now() - started).toBeLessThan(1_000);
      await held.release(0);
      const done = await Promise.all(creates);
      expect(done.map((r) => r.statusCode)).toEqual(Array(15).fill(201));
      expect(done.map((r) => r.json().number as number).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 15 }, (_, i) => i + 1),
      );
    },
  );

  it('does not consume a number when the create fails validation', async () => {
    const tenant = await t.tenant('Gaps');
    expect((await t.api.post('/api/v1/work-orders', tenant.key, { title: 'one' })).json().number).toBe(1);
    expect((await t.api.post('/api/v1/work-orders', tenant.key, { title: 'bad', assetId: 'missing' })).statusCode).toBe(
      422,
    );
    expect((await t.api.post('/api/v1/work-orders', tenant.key, { title: 'two' })).json().number).toBe(2);
  });
});

describe('queue order and cursor', () => {
  it('sorts priority desc, due asc with nulls last, created desc, and the cursor walks every row exactly once', async () => {
    const tenant = await t.tenant('Pages');
    const priorities = ['LOW', 'NORMAL', 'HIGH', 'URGENT'];
    // The queue indexes key the due date as the time left until 9999-12-31 (undated below any real date): the
    // extremes of the accepted range (year 1, the last instant of 9999, past that point) must sort as dates do.
    const dues = [
      null,
      '2026-12-01T00:00:00.000Z',
      '2026-12-05T00:00:00.000Z',
      null,
      '2026-12-01T00:00:00.000Z',
      '9999-12-31T23:59:59.999Z',
      '0001-01-01T00:00:00.000Z',
    ];
    const ids: string[] = [];
    for (let i = 0; i < 28; i++) {
      const res = await t.api.post('/api/v1/work-orders', tenant.key, {
        title: `Job ${i}`,
        priority: priorities[(i * 7) % 4],
        dueAt: dues[i % dues.length],
        status: i % 3 === 0 ? 'ASSIGNED' : 'OPEN',
      });
      ids.push(res.json().workOrderId);
    }
    // Two creation times only: rows i and i+20 share priority, due date and createdAt, so the id
    // tie-breaker decides between them and page boundaries fall inside such ties.
    const evenIds = ids.filter((_, i) => i % 2 === 0);
    const oddIds = ids.filter((_, i) => i % 2 === 1);
    await t.db.prisma.workOrder.updateMany({
      where: { id: { in: evenIds } },
      data: { createdAt: new Date('2026-11-01T00:00:00.000Z') },
    });
    await t.db.prisma.workOrder.updateMany({
      where: { id: { in: oddIds } },
      data: { createdAt: new Date('2026-11-02T00:00:00.000Z') },
    });

    const rows = await t.db.prisma.workOrder.findMany({ where: { orgId: tenant.orgId } });
    const rank = (p: string) => priorities.indexOf(p);
    const expected = [...rows]
      .sort(
        (a, b) =>
          rank(b.priority) - rank(a.priority) ||
          (a.dueAt && b.dueAt ? a.dueAt.getTime() - b.dueAt.getTime() : a.dueAt ? -1 : b.dueAt ? 1 : 0) ||
          b.createdAt.getTime() - a.createdAt.getTime() ||
          (a.id < b.id ? 1 : a.id > b.id ? -1 : 0),
      )
      .map((w) => w.id);

    const full = await t.api.get('/api/v1/work-orders?limit=200', tenant.key);
    expect(full.json().workOrders.map((w: { id: string }) => w.id)).toEqual(expected);
    expect(full.json().nextCursor).toBeNull();

    // The default queue (one partial index), a status subset (one range per status, merged) and one status.
    const assigned = new Set(rows.filter((w) => w.status === 'ASSIGNED').map((w) => w.id));
    const walks: [string, string[]][] = [
      ['', expected],
      ['&status=OPEN,ASSIGNED', expected],
      ['&status=ASSIGNED', expected.filter((id) => assigned.has(id))],
    ];
    for (const [filter, want] of walks) {
      for (const limit of [1, 3, 5]) {
        const walked: string[] = [];
        let cursor: string | null = null;
        do {
          const query: string = `?limit=${limit}${filter}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
          const res = await t.api.get(`/api/v1/work-orders${query}`, tenant.key);
          expect(res.statusCode).toBe(200);
          const page = res.json();
          expect(page.workOrders.length).toBeLessThanOrEqual(limit);
          walked.push(...page.workOrders.map((w: { id: string }) => w.id));
          cursor = page.nextCursor;
        } while (cursor);
        expect(walked, `limit ${limit}${filter}`).toEqual(want);
      }
    }
  });
});
