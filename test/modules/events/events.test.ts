import { ensureMonths } from '../../../src/db/partitions.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pruneWebhookHistory } from '../../../src/delivery/retention.ts';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { makeAsset, makeWebhook, makeYard } from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { securitySuite } from '../../helpers/app/security-suite.ts';

let t: TestApp;
let tenant: TestTenant;
let other: TestTenant;
let otherEventId: string;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await t.tenant();
  other = await t.tenant('Other Org');
  await makeAsset(t, other.key, { nickname: 'Not yours' });
  otherEventId = (await t.api.get('/api/v1/events', other.key)).json().events[0].id;
});
afterAll(() => t.close());

interface FeedEvent {
  id: string;
  event: string;
  organizationId: string;
  createdAt: string;
  data: Record<string, unknown>;
}
const feed = async (query = '', key = tenant.key) => {
  const res = await t.api.get(`/api/v1/events${query}`, key);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ events: FeedEvent[]; nextCursor: string | null }>();
};
/** Walks every page; `between` runs after each page (e.g. to insert meanwhile). */
async function walk(query: string, between: () => Promise<void> = async () => {}) {
  const seen: FeedEvent[] = [];
  let cursor: string | null = null;
  do {
    const page = await feed(`?${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    seen.push(...page.events);
    cursor = page.nextCursor;
    await between();
  } while (cursor);
  return seen;
}
const newestFirst = (a: FeedEvent, b: FeedEvent) =>
  a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1;

securitySuite('event feed', () => ({ t, tenant }), [
  { label: 'GET /events', method: 'GET', path: () => '/api/v1/events', scope: 'events:read' },
  {
    label: 'GET /events/:id',
    method: 'GET',
    path: () => `/api/v1/events/${otherEventId}`,
    scope: 'events:read',
    crossTenant: true,
  },
]);

describe('GET /events', () => {
  it('lists every event of the organisation newest first, in the webhook envelope shape', async () => {
    const assetId = await makeAsset(t, tenant.key, { nickname: 'Feed Dozer' });
    const yardId = await makeYard(t, tenant.key, { name: 'Feed Yard' });
    const { events } = await feed();
    expect(events.length).toBeGreaterThanOrEqual(2);
    expect([...events].sort(newestFirst)).toEqual(events);
    expect(events.every((e) => e.organizationId === tenant.orgId)).toBe(true);
    const created = events.find((e) => e.event === 'asset.created' && e.data.assetId === assetId)!;
    expect(created).toMatchObject({ organizationId: tenant.orgId, data: { nickname: 'Feed Dozer' } });
    expect(Object.keys(created).sort()).toEqual(['createdAt', 'data', 'event', 'id', 'organizationId']);
    // The id is the events table's id: the one a webhook delivery of this event names.
    const [row] = await t.db.sql.query<{ id: string; type: string }>(`SELECT id, type FROM events WHERE id = $1`, [
      created.id,
    ]);
    expect(row.type).toBe('asset.created');
    expect(yardId).toBeTruthy();
  });

  it('GET /events/{id} answers the same item as the list', async () => {
    const { events } = await feed('?limit=1');
    const res = await t.api.get(`/api/v1/events/${events[0].id}`, tenant.key);
    expect(res.statusCode).toBe(200);
    expect(res.json().event).toEqual(events[0]);
    expect((await t.api.get('/api/v1/events/no-such-event', tenant.key)).statusCode).toBe(404);
  });

  it('filters by type (CSV; unknown names ignored, only unknown names match nothing)', async () => {
    await makeAsset(t, tenant.key, { nickname: 'Typed' });
    const assets = await walk('type=asset.created');
    expect(assets.length).toBeGreaterThan(0);
    expect(assets.every((e) => e.event === 'asset.created')).toBe(true);
    const both = await walk('type=asset.created,%20nonsense.type,asset.created');
    expect(both.map((e) => e.id)).toEqual(assets.map((e) => e.id));
    const all = await walk('limit=200');
    const mixed = await walk('type=asset.created,asset.updated&limit=3');
    expect(mixed.map((e) => e.id)).toEqual(
      all.filter((e) => e.event === 'asset.created' || e.event === 'asset.updated').map((e) => e.id),
    );
    expect((await feed('?type=nonsense.type')).events).toEqual([]);
  });

  it('filters by since (inclusive) and until (exclusive), and refuses until before since', async () => {
    const all = await walk('limit=200');
    const pivot = all[Math.floor(all.length / 2)].createdAt;
    const since = await walk(`since=${pivot}&limit=200`);
    const until = await walk(`until=${pivot}&limit=200`);
    expect(since.every((e) => e.createdAt >= pivot)).toBe(true);
    expect(until.every((e) => e.createdAt < pivot)).toBe(true);
    expect(since.length + until.length).toBe(all.length);
    const bad = await t.api.get(`/api/v1/events?since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z`, tenant.key);
    expect(bad.statusCode).toBe(422);
    expect(bad.json().fieldErrors).toHaveProperty('until');
    const cursor = await t.api.get('/api/v1/events?cursor=not-a-cursor', tenant.key);
    expect(cursor.statusCode).toBe(422);
  });

  it('pages stay exact while events are inserted: no duplicates, no row older than the head skipped', async () => {
    for (let i = 0; i < 12; i++) await makeAsset(t, tenant.key, { nickname: `Before walk ${i}` });
    const present = (await walk('limit=200')).map((e) => e.id);
    let n = 0;
    const seen = await walk('limit=4', async () => {
      // Two writers between pages, concurrently: new events land above the walk's position.
      await Promise.all([
        makeAsset(t, tenant.key, { nickname: `During walk ${n++}` }),
        makeYard(t, tenant.key, { name: `During walk yard ${n++}` }),
      ]);
    });
    const ids = seen.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    const returned = new Set(ids);
    expect(present.filter((id) => !returned.has(id))).toEqual([]);
    expect([...seen].sort(newestFirst)).toEqual(seen);
  });

  it('webhook deliveries name the event by the feed id', async () => {
    await makeWebhook(t, tenant.key, { events: ['asset.created'] });
    const assetId = await makeAsset(t, tenant.key, { nickname: 'Delivered' });
    const [event] = (await walk('type=asset.created')).filter((e) => e.data.assetId === assetId);
    const rows = await t.db.sql.query<{ eventId: string }>(
      `SELECT "eventId" FROM webhook_deliveries WHERE "orgId" = $1 AND "eventId" = $2`,
      [tenant.orgId, event.id],
    );
    expect(rows).toHaveLength(1);
  });

  it('is kept as long as delivery history: the retention job prunes old events with the deliveries', async () => {
    // Retention drops whole months: 70 days back lies in a month wholly older than the 30 days kept.
    const old = new Date(Date.now() - 70 * 24 * 3600 * 1000);
    await ensureMonths(t.db, 'events', [old]);
    await t.db.sql.query(
      `INSERT INTO events (id, "orgId", type, data, "createdAt") VALUES ('old-event', $1, 'asset.created', '{}', $2)`,
      [tenant.orgId, old],
    );
    expect((await t.api.get('/api/v1/events/old-event', tenant.key)).statusCode).toBe(200);
    await pruneWebhookHistory(t.db, new Date(), t.deps.config.webhooks.historyDays);
    expect((await t.api.get('/api/v1/events/old-event', tenant.key)).statusCode).toBe(404);
  });
});
