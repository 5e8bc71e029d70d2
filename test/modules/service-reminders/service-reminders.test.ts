import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import {
  makeAsset,
  makeHoursLog,
  makeServiceReminder,
  makeServiceTask,
  makeWebhook,
} from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { securitySuite } from '../../helpers/app/security-suite.ts';
import { startReceiver, type Receiver } from '../../helpers/delivery/harness.ts';
import { sweepCalendarTick } from '../../../src/modules/service-reminders/service-reminder-sweep.job.ts';

const DAY = 86_400_000;
let t: TestApp;
let acme: TestTenant;
let other: TestTenant;
let taskId: string;
let foreign: { reminderId: string };
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  t = await createTestApp({ WEBHOOK_CA_FILE: receiver.caFile });
  acme = await t.tenant('Acme');
  other = await t.tenant('Other');
  taskId = await makeServiceTask(t, acme.key);
  const otherAsset = await makeAsset(t, other.key);
  const otherTask = await makeServiceTask(t, other.key);
  foreign = { reminderId: await makeServiceReminder(t, other.key, otherAsset, otherTask, { dayInterval: 30 }) };
  // Every service_reminder event of the organisation gets a delivery row: the count per reminder is the proof.
  await makeWebhook(t, acme.key, {
    url: `${receiver.origin}/reminders`,
    events: ['service_reminder.due_soon', 'service_reminder.overdue', 'service_reminder.completed'],
  });
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

/**
 * Readings ten days apart (ending about now): a plausible pace for an HOURS meter, so none is held for review
 * (a jump of more hours than elapsed time would be).
 */
const readingsSeen = new Map<string, number>();
function meter(assetId: string, value: number, overrides: Record<string, unknown> = {}) {
  const n = readingsSeen.get(assetId) ?? 0;
  readingsSeen.set(assetId, n + 1);
  const loggedAt = new Date(Date.now() - (100 - n * 10) * DAY).toISOString();
  return makeHoursLog(t, acme.key, assetId, value, { loggedAt, ...overrides });
}

const get = async (id: string) => (await t.api.get(`/api/v1/service-reminders/${id}`, acme.key)).json().serviceReminder;
const remindersOf = async (query: string) =>
  (await t.api.get(`/api/v1/service-reminders?${query}`, acme.key)).json().serviceReminders as Record<string, any>[];
/** The events of one reminder, oldest first, with their delivery counts. */
async function eventsOf(reminderId: string) {
  const rows = await t.db.prisma.event.findMany({ where: { orgId: acme.orgId }, orderBy: { createdAt: 'asc' } });
  const mine = rows.filter((e) => (e.data as { serviceReminderId?: string }).serviceReminderId === reminderId);
  const deliveries = await t.db.prisma.webhookDelivery.count({ where: { eventId: { in: mine.map((e) => e.id) } } });
  return { types: mine.map((e) => e.type), deliveries, data: mine.map((e) => e.data as Record<string, unknown>) };
}

describe('POST /service-reminders', () => {
  it('needs at least one interval (422 with fieldErrors)', async () => {
    const assetId = await makeAsset(t, acme.key);
    const res = await t.api.post('/api/v1/service-reminders', acme.key, { assetId, serviceTaskId: taskId });
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors).toHaveProperty('meterInterval');
    expect(res.json().fieldErrors).toHaveProperty('dayInterval');
  });

  it("answers 404 for another organisation's asset or task", async () => {
    const foreignAsset = await makeAsset(t, other.key);
    const foreignTask = await makeServiceTask(t, other.key);
    const assetId = await makeAsset(t, acme.key);
    const a = await t.api.post('/api/v1/service-reminders', acme.key, {
      assetId: foreignAsset,
      serviceTaskId: taskId,
      dayInterval: 30,
    });
    expect(a.statusCode).toBe(404);
    expect(a.json().fieldErrors).toHaveProperty('assetId');
    const b = await t.api.post('/api/v1/service-reminders', acme.key, {
      assetId,
      serviceTaskId: foreignTask,
      dayInterval: 30,
    });
    expect(b.statusCode).toBe(404);
  });
});

describe('meter reminders', () => {
  it('turns DUE_SOON then OVERDUE with the readings, one event each, and resets on completion', async () => {
    const assetId = await makeAsset(t, acme.key);
    await meter(assetId, 100);
    const id = await makeServiceReminder(t, acme.key, assetId, taskId, { meterInterval: 250, dueSoonMeter: 50 });
    expect(await get(id)).toMatchObject({ status: 'OK', nextDueReading: 350, lastCompletedReading: 100 });

    await meter(assetId, 310);
    expect((await get(id)).status).toBe('DUE_SOON');
    await meter(assetId, 320);
    await meter(assetId, 360);
    expect((await get(id)).status).toBe('OVERDUE');
    await meter(assetId, 400);
    let events = await eventsOf(id);
    expect(events.types).toEqual(['service_reminder.due_soon', 'service_reminder.overdue']);
    expect(events.deliveries).toBe(2);
    expect(events.data[1]).toMatchObject({
      serviceReminderId: id,
      assetId,
      serviceTaskId: taskId,
      status: 'OVERDUE',
      nextDueReading: 350,
    });

    const done = await t.api.post(`/api/v1/service-reminders/${id}/complete`, acme.key, { note: 'Oil and filter' });
    expect(done.statusCode).toBe(201);
    const after = await get(id);
    expect(after).toMatchObject({ status: 'OK', nextDueReading: 650, lastCompletedReading: 400, cycle: 2 });
    expect(after.lastCompletion).toMatchObject({ reading: 400, note: 'Oil and filter', completedById: acme.userId });
    events = await eventsOf(id);
    expect(events.types).toEqual([
      'service_reminder.due_soon',
      'service_reminder.overdue',
      'service_reminder.completed',
    ]);

    const history = (await t.api.get(`/api/v1/service-reminders/${id}/history`, acme.key)).json();
    expect(history.history).toHaveLength(1);
    // Delivered: the receiver gets each of the three, signed, with the reminder's data.
    await t.deps.delivery.dispatcher.dispatchOnce();
    const received = receiver.requests
      .filter((r) => r.path === '/reminders' && r.json.data.serviceReminderId === id)
      .map((r) => r.json.event);
    expect(received.sort()).toEqual([
      'service_reminder.completed',
      'service_reminder.due_soon',
      'service_reminder.overdue',
    ]);
    // The next cycle notifies again.
    await meter(assetId, 640);
    expect((await eventsOf(id)).types.at(-1)).toBe('service_reminder.due_soon');
  });

  it('refuses a completion below the last completion reading (422)', async () => {
    const assetId = await makeAsset(t, acme.key);
    await meter(assetId, 500);
    const id = await makeServiceReminder(t, acme.key, assetId, taskId, { meterInterval: 100 });
    const res = await t.api.post(`/api/v1/service-reminders/${id}/complete`, acme.key, { reading: 400 });
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors).toHaveProperty('reading');
  });

  it('readings held for review do not move reminders until approved; an approved lower one never moves them back', async () => {
    const assetId = await makeAsset(t, acme.key);
    await meter(assetId, 1000);
    const id = await makeServiceReminder(t, acme.key, assetId, taskId, { meterInterval: 100 });
    // 150 hours one hour after the previous reading: implausible, held for review.
    const firstAt = (await t.db.prisma.meterLog.findFirstOrThrow({ where: { assetId } })).loggedAt.getTime();
    const held = await meter(assetId, 1150, { loggedAt: new Date(firstAt + 3_600_000).toISOString() });
    expect((await t.db.prisma.meterLog.findFirstOrThrow({ where: { id: held } })).reviewStatus).toBe('PENDING');
    expect((await get(id)).status).toBe('OK');
    expect((await eventsOf(id)).types).toEqual([]);
    const approved = await t.api.patch(`/api/v1/hours/${held}`, acme.key, { reviewStatus: 'APPROVED' });
    expect(approved.statusCode).toBe(200);
    expect((await get(id)).status).toBe('OVERDUE');
    expect((await eventsOf(id)).types).toEqual(['service_reminder.overdue']);
    // A lower reading (with its note) is held too; approved, it leaves the reminder where it was.
    const lower = await meter(assetId, 1050, { note: 'meter swapped' });
    await t.api.patch(`/api/v1/hours/${lower}`, acme.key, { reviewStatus: 'APPROVED' });
    expect((await get(id)).status).toBe('OVERDUE');
  });

  it('starts counting from the first reading when the asset has none', async () => {
    const assetId = await makeAsset(t, acme.key);
    const id = await makeServiceReminder(t, acme.key, assetId, taskId, { meterInterval: 100, dueSoonMeter: 10 });
    expect(await get(id)).toMatchObject({ status: 'OK', nextDueReading: null });
    await meter(assetId, 40);
    expect(await get(id)).toMatchObject({ status: 'OK', nextDueReading: 140, lastCompletedReading: 40 });
    await meter(assetId, 135);
    expect((await get(id)).status).toBe('DUE_SOON');
  });
});

describe('calendar reminders', () => {
  it('are due whichever comes first, and the sweep moves them with time (one event per transition)', async () => {
    const assetId = await makeAsset(t, acme.key);
    await meter(assetId, 10);
    const id = await makeServiceReminder(t, acme.key, assetId, taskId, {
      meterInterval: 500,
      dayInterval: 30,
      dueSoonDays: 7,
      lastCompletedAt: new Date(Date.now() - 25 * DAY).toISOString(),
    });
    expect((await get(id)).status).toBe('DUE_SOON');
    const swept = t.deps.services.serviceReminders;
    await swept.sweep(new Date(Date.now() + 4 * DAY));
    await swept.sweep(new Date(Date.now() + 5 * DAY));
    expect((await get(id)).status).toBe('OVERDUE');
    expect((await eventsOf(id)).types).toEqual(['service_reminder.due_soon', 'service_reminder.overdue']);
  });
});

describe('the calendar sweep tick', () => {
  it('takes batch after batch until nothing more is due: a backlog larger than a batch drains in one tick', async () => {
    const assetId = await makeAsset(t, acme.key, { nickname: 'Backlog' });
    const ids = [];
    for (let i = 0; i < 7; i++)
      ids.push(
        await makeServiceReminder(t, acme.key, assetId, taskId, {
          dayInterval: 30,
          lastCompletedAt: new Date(Date.now() - 20 * DAY).toISOString(),
        }),
      );
    const later = new Date(Date.now() + 11 * DAY);
    const swept = await sweepCalendarTick(t.db, () => later, { batch: 3 });
    expect(swept).toBeGreaterThanOrEqual(7);
    for (const id of ids) expect((await get(id)).status).toBe('OVERDUE');
    expect(await sweepCalendarTick(t.db, () => later, { batch: 3 })).toBe(0);
  });
});

describe('GET /service-reminders', () => {
  it('lists the most urgent first and pages through the order', async () => {
    const assetId = await makeAsset(t, acme.key, { nickname: 'Order test' });
    const task = await makeServiceTask(t, acme.key, { name: 'Order task' });
    const ago = (d: number) => new Date(Date.now() - d * DAY).toISOString();
    const mk = (days: number, last: number) =>
      makeServiceReminder(t, acme.key, assetId, task, {
        dayInterval: days,
        dueSoonDays: 5,
        lastCompletedAt: ago(last),
      });
    const ok = await mk(100, 0);
    const overdueLittle = await mk(10, 11);
    const soon = await mk(10, 7);
    const overdueMuch = await mk(10, 40);
    const order = [overdueMuch, overdueLittle, soon, ok];
    const all = (await t.api.get(`/api/v1/service-reminders?serviceTaskId=${task}`, acme.key)).json();
    expect(all.serviceReminders.map((r: { id: string }) => r.id)).toEqual(order);
    const urgent = (
      await t.api.get(`/api/v1/service-reminders?serviceTaskId=${task}&status=DUE_SOON,OVERDUE`, acme.key)
    ).json();
    expect(urgent.serviceReminders.map((r: { id: string }) => r.id)).toEqual(order.slice(0, 3));
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { serviceReminders: { id: string }[]; nextCursor: string | null } = (
        await t.api.get(
          `/api/v1/service-reminders?assetId=${assetId}&limit=1${cursor ? `&cursor=${cursor}` : ''}`,
          acme.key,
        )
      ).json();
      seen.push(...page.serviceReminders.map((r: { id: string }) => r.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(order);
  });
});

describe('work orders cover reminders', () => {
  it('a work order DONE by PATCH completes its reminders at the current reading', async () => {
    const assetId = await makeAsset(t, acme.key);
    await meter(assetId, 100);
    const id = await makeServiceReminder(t, acme.key, assetId, taskId, { meterInterval: 100 });
    await meter(assetId, 230);
    expect((await get(id)).status).toBe('OVERDUE');
    const wo = await t.api.post('/api/v1/work-orders', acme.key, {
      title: 'Service',
      assetId,
      serviceReminderIds: [id],
    });
    expect(wo.statusCode).toBe(201);
    const woId = wo.json().workOrderId;
    expect((await t.api.get(`/api/v1/work-orders/${woId}`, acme.key)).json().workOrder.serviceReminderIds).toEqual([
      id,
    ]);
    await t.api.patch(`/api/v1/work-orders/${woId}`, acme.key, { status: 'DONE' });
    const after = await get(id);
    expect(after).toMatchObject({ status: 'OK', lastCompletedReading: 230, nextDueReading: 330, cycle: 2 });
    expect(after.lastCompletion.workOrderId).toBe(woId);
  });

  it('a repair closing the work order completes them too', async () => {
    const assetId = await makeAsset(t, acme.key);
    await meter(assetId, 50);
    const id = await makeServiceReminder(t, acme.key, assetId, taskId, { meterInterval: 100 });
    const woId = (await t.api.post('/api/v1/work-orders', acme.key, { assetId, serviceReminderIds: [id] })).json()
      .workOrderId;
    expect((await t.api.post('/api/v1/repairs', acme.key, { workOrderId: woId, laborHours: 1 })).statusCode).toBe(201);
    expect(await get(id)).toMatchObject({ cycle: 2, lastCompletedReading: 50 });
  });
});

describe('reminder rules', () => {
  it('a snooze holds the reminder SNOOZED until it ends', async () => {
    const assetId = await makeAsset(t, acme.key);
    const id = await makeServiceReminder(t, acme.key, assetId, taskId, {
      dayInterval: 10,
      lastCompletedAt: new Date(Date.now() - 20 * DAY).toISOString(),
    });
    expect((await get(id)).status).toBe('OVERDUE');
    const until = new Date(Date.now() + 2 * DAY).toISOString();
    const res = await t.api.post(`/api/v1/service-reminders/${id}/snooze`, acme.key, { until });
    expect(res.json()).toMatchObject({ status: 'SNOOZED' });
    expect(
      (await t.api.post(`/api/v1/service-reminders/${id}/snooze`, acme.key, { until: '2000-01-01' })).statusCode,
    ).toBe(422);
    await t.deps.services.serviceReminders.sweep(new Date(Date.now() + 3 * DAY));
    expect((await get(id)).status).toBe('OVERDUE');
    // One overdue event for the cycle, even though it fell overdue again after the snooze.
    const events = await t.db.prisma.event.findMany({ where: { orgId: acme.orgId, type: 'service_reminder.overdue' } });
    expect(events.filter((e) => (e.data as { serviceReminderId: string }).serviceReminderId === id)).toHaveLength(1);
  });

  it("an archived or sold asset's reminders leave the list and the sweep, and return with the asset", async () => {
    const assetId = await makeAsset(t, acme.key);
    const id = await makeServiceReminder(t, acme.key, assetId, taskId, { dayInterval: 30, dueSoonDays: 5 });
    await t.api.patch(`/api/v1/assets/${assetId}`, acme.key, { lifecycleStatus: 'ARCHIVED' });
    expect(await remindersOf(`assetId=${assetId}`)).toHaveLength(0);
    expect((await get(id)).assetRetired).toBe(true);
    await t.deps.services.serviceReminders.sweep(new Date(Date.now() + 40 * DAY));
    expect((await get(id)).status).toBe('OK');
    await t.api.patch(`/api/v1/assets/${assetId}`, acme.key, { lifecycleStatus: 'IN_SERVICE' });
    expect((await remindersOf(`assetId=${assetId}`)).map((r) => r.id)).toEqual([id]);
  });

  it('a reminder with a meter interval on a meterless asset is 422', async () => {
    const trailer = await makeAsset(t, acme.key, { assetClass: 'trailer' });
    const res = await t.api.post('/api/v1/service-reminders', acme.key, {
      assetId: trailer,
      serviceTaskId: taskId,
      meterInterval: 10,
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors).toHaveProperty('meterInterval');
  });
});

securitySuite('service reminders', () => ({ t, tenant: acme }), [
  { label: 'GET /service-reminders', method: 'GET', path: () => '/api/v1/service-reminders', scope: 'workorders:read' },
  {
    label: 'POST /service-reminders',
    method: 'POST',
    path: () => '/api/v1/service-reminders',
    scope: 'workorders:write',
    body: { assetId: 'x', serviceTaskId: 'y', dayInterval: 1 },
  },
  ...(
    [
      ['GET', ''],
      ['PATCH', ''],
      ['DELETE', ''],
      ['POST', '/complete'],
      ['POST', '/snooze'],
      ['GET', '/history'],
    ] as const
  ).map(([method, tail]) => ({
    label: `${method} /service-reminders/:id${tail}`,
    method,
    path: () => `/api/v1/service-reminders/${foreign.reminderId}${tail}`,
    scope: method === 'GET' ? ('workorders:read' as const) : ('workorders:write' as const),
    body: method === 'PATCH' ? { dayInterval: 5 } : {},
    crossTenant: true,
  })),
]);
