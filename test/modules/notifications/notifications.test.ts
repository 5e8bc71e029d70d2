import cron from 'node-cron';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { JOBS } from '../../../src/jobs/jobs.ts';
import { queueRenewalHeadsUps } from '../../../src/modules/notifications/notifications.repository.ts';
import {
  createNotificationSender,
  NOTIFICATION_MAX_ATTEMPTS,
} from '../../../src/modules/notifications/notification-sender.job.ts';
import type {
  NotificationMessage,
  NotificationTransport,
} from '../../../src/modules/notifications/notification-transport.adapter.ts';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { makeAsset, makeFlag, makeHoursLog } from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';

let t: TestApp;
let acme: TestTenant;
let assetId: string;
const DAY = 24 * 3600 * 1000;

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  assetId = await makeAsset(t, acme.key, { nickname: 'Truck 12', assetClass: 'on-road' });
});
afterAll(() => t.close());
beforeEach(async () => {
  await t.db.prisma.notification.deleteMany({});
});

function recorder(
  fail: (m: NotificationMessage) => boolean = () => false,
): NotificationTransport & { sent: NotificationMessage[] } {
  const sent: NotificationMessage[] = [];
  return {
    name: 'test',
    sent,
    async send(message) {
      if (fail(message)) throw new Error('provider down');
      sent.push(message);
    },
  };
}
const senderWith = (transport: NotificationTransport) =>
  createNotificationSender({ db: t.db, log: t.deps.logger, transport });
const raiseFlag = () => makeFlag(t, acme.key, assetId, { note: 'Smoke from exhaust' });

describe('notification sender', () => {
  it("delivers a new flag's PUSH and EMAIL through the transport and marks them SENT", async () => {
    const flagId = await raiseFlag();
    const transport = recorder();
    expect(await senderWith(transport).sendPending()).toEqual({ sent: 2, retrying: 0, failed: 0 });
    expect(transport.sent.map((m) => m.channel).sort()).toEqual(['EMAIL', 'PUSH']);
    expect(transport.sent[0]).toMatchObject({
      orgId: acme.orgId,
      kind: 'flag.created',
      subject: 'RED flag: Truck 12',
      attempt: 1,
      payload: { flagId },
    });
    expect(transport.sent[0].body).toContain('Smoke from exhaust');
    const rows = await t.db.prisma.notification.findMany({ where: { orgId: acme.orgId } });
    expect(rows.every((r) => r.status === 'SENT' && r.sentAt && r.attempts === 1)).toBe(true);
    expect(await senderWith(transport).sendPending()).toEqual({ sent: 0, retrying: 0, failed: 0 });
  });

  it('the app service sends with the default logging transport', async () => {
    await raiseFlag();
    expect(await t.deps.services.notifications.sendPending()).toMatchObject({ sent: 2 });
  });

  it('retries a failed send on the backoff schedule and gives up after the last attempt', async () => {
    await raiseFlag();
    const failing = recorder(() => true);
    expect(await senderWith(failing).sendPending()).toEqual({ sent: 0, retrying: 2, failed: 0 });
    let rows = await t.db.prisma.notification.findMany({});
    expect(rows.every((r) => r.status === 'PENDING' && r.attempts === 1 && r.error === 'provider down')).toBe(true);
    // Not due again until the next offset has passed.
    expect(await senderWith(failing).sendPending()).toEqual({ sent: 0, retrying: 0, failed: 0 });
    for (let attempt = 2; attempt <= NOTIFICATION_MAX_ATTEMPTS; attempt++) {
      await t.db.prisma.notification.updateMany({ data: { createdAt: new Date(Date.now() - 3 * DAY) } });
      const outcome = await senderWith(failing).sendPending();
      expect(outcome).toEqual(
        attempt < NOTIFICATION_MAX_ATTEMPTS ? { sent: 0, retrying: 2, failed: 0 } : { sent: 0, retrying: 0, failed: 2 },
      );
    }
    rows = await t.db.prisma.notification.findMany({});
    expect(rows.every((r) => r.status === 'FAILED' && r.attempts === NOTIFICATION_MAX_ATTEMPTS)).toBe(true);
    expect(await senderWith(recorder()).sendPending()).toEqual({ sent: 0, retrying: 0, failed: 0 });
  });

  it('recovers when the provider comes back', async () => {
    await raiseFlag();
    await senderWith(recorder(() => true)).sendPending();
    await t.db.prisma.notification.updateMany({ data: { createdAt: new Date(Date.now() - 2 * 60_000) } });
    const ok = recorder();
    expect(await senderWith(ok).sendPending()).toEqual({ sent: 2, retrying: 0, failed: 0 });
    expect(ok.sent.every((m) => m.attempt === 2)).toBe(true);
  });

  it('never sends a row twice when several senders run at once', async () => {
    for (let i = 0; i < 5; i++) await raiseFlag();
    const transport = recorder();
    await Promise.all(Array.from({ length: 4 }, () => senderWith(transport).sendPending()));
    expect(transport.sent).toHaveLength(10);
    expect(new Set(transport.sent.map((m) => m.id)).size).toBe(10);
  });

  it('a transport that hangs counts as a failed attempt', async () => {
    await raiseFlag();
    const hanging: NotificationTransport = { name: 'hang', send: () => new Promise(() => {}) };
    const sender = createNotificationSender({ db: t.db, log: t.deps.logger, transport: hanging, timeoutMs: 50 });
    expect(await sender.sendPending()).toEqual({ sent: 0, retrying: 2, failed: 0 });
    expect((await t.db.prisma.notification.findFirstOrThrow({})).error).toMatch(/did not answer/);
  });
});

describe('renewal heads-ups', () => {
  const setDates = (data: {
    registrationExpiresAt?: Date | null;
    insuranceExpiresAt?: Date | null;
    lifecycleStatus?: 'IN_SERVICE' | 'SOLD';
  }) => t.db.prisma.asset.update({ where: { id: assetId }, data });
  const renewalRows = () =>
    t.db.prisma.notification.findMany({
      where: { orgId: acme.orgId, kind: { contains: 'renewal' } },
      orderBy: { kind: 'asc' },
    });

  it('queues one EMAIL per renewal date within 30 days, exactly once across sweeps', async () => {
    const now = new Date('2026-11-22T12:00:00Z');
    await setDates({
      registrationExpiresAt: new Date('2026-12-10T00:00:00Z'),
      insuranceExpiresAt: new Date('2026-12-22T00:00:00Z'),
      lifecycleStatus: 'IN_SERVICE',
    });
    expect(await queueRenewalHeadsUps(t.db.prisma, {}, now)).toBe(2);
    expect(await queueRenewalHeadsUps(t.db.prisma, {}, now)).toBe(0);
    expect(await queueRenewalHeadsUps(t.db.prisma, { assetId }, new Date('2026-11-25T12:00:00Z'))).toBe(0);
    const rows = await renewalRows();
    expect(rows.map((r) => [r.kind, r.channel, r.dedupeKey])).toEqual([
      ['asset.insurance_renewal_due', 'EMAIL', `renewal:insurance:${assetId}:2026-12-22`],
      ['asset.registration_renewal_due', 'EMAIL', `renewal:registration:${assetId}:2026-12-10`],
    ]);
    expect(rows[1].subject).toBe('Registration for Truck 12 expires on 2026-12-10');
    expect(rows[1].payload).toMatchObject({ assetId, renewal: 'registration', daysLeft: 18 });
  });

  it('is exactly once even when sweeps run concurrently', async () => {
    const now = new Date('2026-11-22T12:00:00Z');
    await setDates({
      registrationExpiresAt: new Date('2026-12-01T00:00:00Z'),
      insuranceExpiresAt: null,
      lifecycleStatus: 'IN_SERVICE',
    });
    const counts = await Promise.all(Array.from({ length: 5 }, () => queueRenewalHeadsUps(t.db.prisma, {}, now)));
    expect(counts.reduce((a, b) => a + b, 0)).toBe(1);
    expect(await renewalRows()).toHaveLength(1);
  });

  it('a changed renewal date gets its own heads-up', async () => {
    const now = new Date('2026-11-22T12:00:00Z');
    await setDates({
      registrationExpiresAt: new Date('2026-12-01T00:00:00Z'),
      insuranceExpiresAt: null,
      lifecycleStatus: 'IN_SERVICE',
    });
    await queueRenewalHeadsUps(t.db.prisma, {}, now);
    await setDates({ registrationExpiresAt: new Date('2026-12-05T00:00:00Z') });
    expect(await queueRenewalHeadsUps(t.db.prisma, {}, now)).toBe(1);
  });

  it('ignores dates beyond 30 days, past dates and sold assets', async () => {
    const now = new Date('2026-11-22T12:00:00Z');
    await setDates({
      registrationExpiresAt: new Date('2026-12-23T12:00:01Z'),
      insuranceExpiresAt: new Date('2026-11-21T00:00:00Z'),
      lifecycleStatus: 'IN_SERVICE',
    });
    expect(await queueRenewalHeadsUps(t.db.prisma, {}, now)).toBe(0);
    await setDates({ registrationExpiresAt: new Date('2026-12-01T00:00:00Z'), lifecycleStatus: 'SOLD' });
    expect(await queueRenewalHeadsUps(t.db.prisma, {}, now)).toBe(0);
    await setDates({ lifecycleStatus: 'IN_SERVICE' });
    expect(await queueRenewalHeadsUps(t.db.prisma, {}, now)).toBe(1);
  });

  it('a meter reading queues the heads-up for its asset in the background', async () => {
    await setDates({
      registrationExpiresAt: new Date(Date.now() + 10 * DAY),
      insuranceExpiresAt: null,
      lifecycleStatus: 'IN_SERVICE',
    });
    await makeHoursLog(t, acme.key, assetId, 1000);
    await t.deps.background.idle();
    expect(await renewalRows()).toHaveLength(1);
  });

  it('a reading on an asset with no renewal in the window runs no heads-up query at all', async () => {
    await setDates({
      registrationExpiresAt: new Date(Date.now() + 90 * DAY),
      insuranceExpiresAt: null,
      lifecycleStatus: 'IN_SERVICE',
    });
    const started: string[] = [];
    const run = t.deps.background.run;
    t.deps.background.run = (name, context, work) => {
      started.push(name);
      run(name, context, work);
    };
    try {
      await makeHoursLog(t, acme.key, assetId, 2000);
      await setDates({ registrationExpiresAt: new Date(Date.now() + 5 * DAY) });
      await makeHoursLog(t, acme.key, assetId, 2100);
    } finally {
      t.deps.background.run = run;
    }
    await t.deps.background.idle();
    expect(started).toEqual(['renewal-heads-ups']);
    await t.db.prisma.notification.deleteMany({ where: { orgId: acme.orgId, kind: { contains: 'renewal' } } });
  });
});

describe('jobs', () => {
  it('registers the sender and the daily renewal sweep with valid cron expressions', async () => {
    const jobs = JOBS.map((make) => make(t.deps)).filter((j) => j !== null);
    const send = jobs.find((j) => j.name === 'notifications-send');
    const renewals = jobs.find((j) => j.name === 'renewal-heads-ups');
    expect(send && cron.validate(send.cron)).toBe(true);
    expect(renewals?.cron).toBe('0 6 * * *');
    await setRegistrationSoon();
    expect(await renewals!.run()).toBe(1);
    expect(await send!.run()).toMatchObject({ sent: 1 });
  });
});

async function setRegistrationSoon() {
  await t.db.prisma.asset.update({
    where: { id: assetId },
    data: {
      registrationExpiresAt: new Date(Date.now() + 3 * DAY),
      insuranceExpiresAt: null,
      lifecycleStatus: 'IN_SERVICE',
    },
  });
}
