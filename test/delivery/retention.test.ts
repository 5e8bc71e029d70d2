import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pruneWebhookHistory } from '../../src/delivery/retention.ts';
import { ensureMonths, listPartitions } from '../../src/db/partitions.ts';
import { JOBS } from '../../src/jobs/jobs.ts';
import { createTestApp, type TestApp } from '../helpers/app/test-app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const DAY = 24 * 3600 * 1000;

describe('webhook history retention', () => {
  it('deletes deliveries older than 30 days and the events nothing refers to any more', async () => {
    const tenant = await t.tenant();
    const sub = await t.db.prisma.webhookSubscription.create({
      data: { orgId: tenant.orgId, url: 'https://example.com/h', events: ['asset.created'], secret: 's' },
    });
    // Noon on the first of a month: 31 days back is the previous month's last day, so the months wholly older
    // than 30 days hold exactly the rows older than 30 days, as they would with a row-by-row cutoff.
    const now = new Date(Date.UTC(2026, 11, 1, 12));
    const ages = [2, 29, 31, 40, 45].map((d) => new Date(now.getTime() - d * DAY));
    await ensureMonths(t.db, 'events', ages);
    await ensureMonths(t.db, 'webhook_deliveries', ages);
    const event = (id: string, ageDays: number) =>
      t.db.prisma.event.create({
        data: {
          id,
          orgId: tenant.orgId,
          type: 'asset.created',
          data: {},
          createdAt: new Date(now.getTime() - ageDays * DAY),
        },
      });
    const delivery = (eventId: string, ageDays: number, status: 'DELIVERED' | 'ABANDONED' | 'PENDING') =>
      t.db.prisma.webhookDelivery.create({
        data: {
          orgId: tenant.orgId,
          subscriptionId: sub.id,
          eventId,
          eventType: 'asset.created',
          status,
          createdAt: new Date(now.getTime() - ageDays * DAY),
        },
      });
    await event('old-delivered', 31);
    await delivery('old-delivered', 31, 'DELIVERED');
    await event('old-abandoned', 40);
    await delivery('old-abandoned', 40, 'ABANDONED');
    await event('old-no-subscriber', 45);
    await event('recent', 29);
    await delivery('recent', 29, 'DELIVERED');
    await event('old-event-recent-delivery', 31);
    await delivery('old-event-recent-delivery', 2, 'PENDING');

    const removed = await pruneWebhookHistory(t.db, now);
    expect(removed).toEqual({ deliveries: 2, events: 3 });
    // The tenant's own set-up events (user.created, apiKey.created) are recent and stay; only this test's matter.
    const kept = await t.db.prisma.event.findMany({
      where: { orgId: tenant.orgId, type: 'asset.created' },
      orderBy: { id: 'asc' },
    });
    expect(kept.map((e) => e.id)).toEqual(['old-event-recent-delivery', 'recent']);
    expect(
      (await t.db.prisma.webhookDelivery.findMany({ where: { orgId: tenant.orgId } })).map((d) => d.eventId).sort(),
    ).toEqual(['old-event-recent-delivery', 'recent']);
    // The month of deliveries left whole; the month of events stays while a younger delivery names one of them.
    expect((await listPartitions(t.db.sql, 'webhook_deliveries')).map((p) => p.name)).not.toContain(
      'webhook_deliveries_2026_10',
    );
    expect((await listPartitions(t.db.sql, 'events')).map((p) => p.name)).toContain('events_2026_10');

    // A month later the younger delivery has aged out too: its month goes, and the month of events with it.
    await pruneWebhookHistory(t.db, new Date(Date.UTC(2027, 0, 1, 12)));
    expect(await t.db.prisma.event.count({ where: { orgId: tenant.orgId, type: 'asset.created' } })).toBe(0);
    expect((await listPartitions(t.db.sql, 'events')).map((p) => p.name)).not.toContain('events_2026_10');
  });

  it('runs daily and the dispatcher runs on WEBHOOK_DISPATCH_CRON', () => {
    const jobs = JOBS.map((make) => make(t.deps)).filter((j) => j !== null);
    expect(jobs.find((j) => j.name === 'webhook-retention')?.cron).toBe('17 3 * * *');
    expect(jobs.find((j) => j.name === 'webhook-dispatch')?.cron).toBe(t.deps.config.webhooks.dispatchCron);
  });
});
