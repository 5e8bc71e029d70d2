import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import {
  makeAsset,
  makeHoursLog,
  makeServiceProgram,
  makeServiceReminder,
  makeServiceTask,
} from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { securitySuite } from '../../helpers/app/security-suite.ts';

const DAY = 86_400_000;
let t: TestApp;
let acme: TestTenant;
let other: TestTenant;
let oil: string;
let filters: string;
let foreign: { assetId: string; taskId: string; reminderId: string; programId: string };

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  other = await t.tenant('Other');
  oil = await makeServiceTask(t, acme.key, { name: 'Engine oil' });
  filters = await makeServiceTask(t, acme.key, { name: 'Hydraulic filters' });
  const assetId = await makeAsset(t, other.key);
  const taskId = await makeServiceTask(t, other.key);
  foreign = {
    assetId,
    taskId,
    reminderId: await makeServiceReminder(t, other.key, assetId, taskId, { dayInterval: 30 }),
    programId: await makeServiceProgram(t, other.key, [{ serviceTaskId: taskId, dayInterval: 30 }]),
  };
});
afterAll(() => t.close());

const reminder = async (id: string) =>
  (await t.api.get(`/api/v1/service-reminders/${id}`, acme.key)).json().serviceReminder;
const remindersOf = async (query: string) =>
  (await t.api.get(`/api/v1/service-reminders?${query}`, acme.key)).json().serviceReminders as Record<string, any>[];

describe('service tasks', () => {
  it('lists by name, renames (reflected on reminders), and refuses to delete a task in use (409)', async () => {
    const task = await makeServiceTask(t, acme.key, { name: 'A-inspection' });
    const assetId = await makeAsset(t, acme.key);
    const id = await makeServiceReminder(t, acme.key, assetId, task, { dayInterval: 365 });
    const list = (await t.api.get('/api/v1/service-tasks', acme.key)).json();
    expect(list.serviceTasks.map((s: { name: string }) => s.name)).toEqual(
      [...list.serviceTasks.map((s: { name: string }) => s.name)].sort(),
    );
    expect(
      (await t.api.patch(`/api/v1/service-tasks/${task}`, acme.key, { name: 'Annual inspection' })).statusCode,
    ).toBe(200);
    expect((await reminder(id)).serviceTaskName).toBe('Annual inspection');
    const del = await t.api.delete(`/api/v1/service-tasks/${task}`, acme.key);
    expect(del.statusCode).toBe(409);
    expect(del.json()).toMatchObject({ error: 'service_task_in_use', reminderCount: 1 });
    await t.api.delete(`/api/v1/service-reminders/${id}`, acme.key);
    expect((await t.api.delete(`/api/v1/service-tasks/${task}`, acme.key)).statusCode).toBe(200);
    expect((await t.api.get(`/api/v1/service-tasks/${task}`, acme.key)).statusCode).toBe(404);
  });
});

describe('service programs', () => {
  it('apply one reminder per item per asset with a summary, update reminders with their item, and come off an asset', async () => {
    const a1 = await makeAsset(t, acme.key);
    const a2 = await makeAsset(t, acme.key);
    const programId = await makeServiceProgram(t, acme.key, [
      { serviceTaskId: oil, meterInterval: 250, dueSoonMeter: 25 },
      { serviceTaskId: filters, dayInterval: 365, dueSoonDays: 30 },
    ]);
    const applied = await t.api.post(`/api/v1/service-programs/${programId}/assets`, acme.key, {
      assetIds: [a1, a2, foreign.assetId, 'nope'],
    });
    expect(applied.statusCode).toBe(200);
    expect(applied.json().summary).toEqual({
      received: 4,
      applied: 2,
      alreadyApplied: 0,
      notFound: 2,
      remindersCreated: 4,
    });
    const again = await t.api.post(`/api/v1/service-programs/${programId}/assets`, acme.key, { assetIds: [a1] });
    expect(again.json().summary).toMatchObject({ applied: 0, alreadyApplied: 1, remindersCreated: 0 });
    expect(await remindersOf(`serviceProgramId=${programId}`)).toHaveLength(4);

    const detail = (await t.api.get(`/api/v1/service-programs/${programId}`, acme.key)).json().serviceProgram;
    expect(detail.assetCount).toBe(2);
    const [oilItem, filterItem] = detail.items;
    const patched = await t.api.patch(`/api/v1/service-programs/${programId}`, acme.key, {
      items: [
        { ...oilItem, meterInterval: 500 },
        { id: filterItem.id, serviceTaskId: filters, dayInterval: 180 },
      ],
    });
    expect(patched.statusCode).toBe(200);
    const oilReminders = await remindersOf(`serviceProgramId=${programId}&serviceTaskId=${oil}`);
    expect(oilReminders.map((r) => r.meterInterval)).toEqual([500, 500]);
    const filterReminders = await remindersOf(`serviceProgramId=${programId}&serviceTaskId=${filters}`);
    expect(filterReminders.map((r) => r.dayInterval)).toEqual([180, 180]);

    const removed = await t.api.delete(`/api/v1/service-programs/${programId}/assets/${a1}`, acme.key);
    expect(removed.json()).toMatchObject({ remindersDeleted: 2 });
    expect(await remindersOf(`assetId=${a1}`)).toHaveLength(0);
    expect((await t.api.delete(`/api/v1/service-programs/${programId}/assets/${a1}`, acme.key)).statusCode).toBe(404);
  });

  it('with autoWorkOrder opens one work order per reminder cycle when it turns due', async () => {
    const assetId = await makeAsset(t, acme.key);
    await makeHoursLog(t, acme.key, assetId, 100, { loggedAt: new Date(Date.now() - 40 * DAY).toISOString() });
    const programId = await makeServiceProgram(
      t,
      acme.key,
      [{ serviceTaskId: oil, meterInterval: 100, dueSoonMeter: 10 }],
      {
        autoWorkOrder: true,
      },
    );
    await t.api.post(`/api/v1/service-programs/${programId}/assets`, acme.key, { assetIds: [assetId] });
    const [r] = await remindersOf(`assetId=${assetId}`);
    await makeHoursLog(t, acme.key, assetId, 195, { loggedAt: new Date(Date.now() - 20 * DAY).toISOString() });
    await makeHoursLog(t, acme.key, assetId, 250, { loggedAt: new Date(Date.now() - 10 * DAY).toISOString() });
    const links = await t.db.prisma.workOrderServiceReminder.findMany({ where: { reminderId: r.id } });
    expect(links).toHaveLength(1);
    expect(links[0].cycle).toBe(1);
    // Closing that order completes the reminder: a new cycle, which may open its own order later.
    await t.api.patch(`/api/v1/work-orders/${links[0].workOrderId}`, acme.key, { status: 'DONE' });
    expect(await reminder(r.id)).toMatchObject({ cycle: 2, status: 'OK', lastCompletedReading: 250 });
  });
});

describe('rules', () => {
  it('a snooze holds the reminder SNOOZED until it ends', async () => {
    const assetId = await makeAsset(t, acme.key);
    const id = await makeServiceReminder(t, acme.key, assetId, oil, {
      dayInterval: 10,
      lastCompletedAt: new Date(Date.now() - 20 * DAY).toISOString(),
    });
    expect((await reminder(id)).status).toBe('OVERDUE');
    const until = new Date(Date.now() + 2 * DAY).toISOString();
    const res = await t.api.post(`/api/v1/service-reminders/${id}/snooze`, acme.key, { until });
    expect(res.json()).toMatchObject({ status: 'SNOOZED' });
    expect(
      (await t.api.post(`/api/v1/service-reminders/${id}/snooze`, acme.key, { until: '2000-01-01' })).statusCode,
    ).toBe(422);
    await t.deps.services.serviceReminders.sweep(new Date(Date.now() + 3 * DAY));
    expect((await reminder(id)).status).toBe('OVERDUE');
    // One overdue event for the cycle, even though it fell overdue again after the snooze.
    const events = await t.db.prisma.event.findMany({ where: { orgId: acme.orgId, type: 'service_reminder.overdue' } });
    expect(events.filter((e) => (e.data as { serviceReminderId: string }).serviceReminderId === id)).toHaveLength(1);
  });

  it("an archived or sold asset's reminders leave the list and the sweep, and return with the asset", async () => {
    const assetId = await makeAsset(t, acme.key);
    const id = await makeServiceReminder(t, acme.key, assetId, oil, { dayInterval: 30, dueSoonDays: 5 });
    await t.api.patch(`/api/v1/assets/${assetId}`, acme.key, { lifecycleStatus: 'ARCHIVED' });
    expect(await remindersOf(`assetId=${assetId}`)).toHaveLength(0);
    expect((await reminder(id)).assetRetired).toBe(true);
    await t.deps.services.serviceReminders.sweep(new Date(Date.now() + 40 * DAY));
    expect((await reminder(id)).status).toBe('OK');
    await t.api.patch(`/api/v1/assets/${assetId}`, acme.key, { lifecycleStatus: 'IN_SERVICE' });
    expect((await remindersOf(`assetId=${assetId}`)).map((r) => r.id)).toEqual([id]);
  });

  it('a reminder with a meter interval on a meterless asset is 422', async () => {
    const trailer = await makeAsset(t, acme.key, { assetClass: 'trailer' });
    const res = await t.api.post('/api/v1/service-reminders', acme.key, {
      assetId: trailer,
      serviceTaskId: oil,
      meterInterval: 10,
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors).toHaveProperty('meterInterval');
  });
});

securitySuite('service programs', () => ({ t, tenant: acme }), [
  { label: 'GET /service-tasks', method: 'GET', path: () => '/api/v1/service-tasks', scope: 'workorders:read' },
  {
    label: 'POST /service-tasks',
    method: 'POST',
    path: () => '/api/v1/service-tasks',
    scope: 'workorders:write',
    body: { name: 'x' },
  },
  ...(['GET', 'PATCH', 'DELETE'] as const).map((method) => ({
    label: `${method} /service-tasks/:id`,
    method,
    path: () => `/api/v1/service-tasks/${foreign.taskId}`,
    scope: method === 'GET' ? ('workorders:read' as const) : ('workorders:write' as const),
    body: { name: 'x' },
    crossTenant: true,
  })),
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
  { label: 'GET /service-programs', method: 'GET', path: () => '/api/v1/service-programs', scope: 'workorders:read' },
  {
    label: 'POST /service-programs',
    method: 'POST',
    path: () => '/api/v1/service-programs',
    scope: 'workorders:write',
    body: { name: 'x', items: [{ serviceTaskId: 'y', dayInterval: 1 }] },
  },
  ...(['GET', 'PATCH'] as const).map((method) => ({
    label: `${method} /service-programs/:id`,
    method,
    path: () => `/api/v1/service-programs/${foreign.programId}`,
    scope: method === 'GET' ? ('workorders:read' as const) : ('workorders:write' as const),
    body: { name: 'x' },
    crossTenant: true,
  })),
  {
    label: 'POST /service-programs/:id/assets',
    method: 'POST',
    path: () => `/api/v1/service-programs/${foreign.programId}/assets`,
    scope: 'workorders:write',
    body: { assetIds: ['a'] },
    crossTenant: true,
  },
  {
    label: 'DELETE /service-programs/:id/assets/:assetId',
    method: 'DELETE',
    path: () => `/api/v1/service-programs/${foreign.programId}/assets/${foreign.assetId}`,
    scope: 'workorders:write',
    crossTenant: true,
  },
]);
