import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { makeAsset, makeHoursLog, makeServiceProgram, makeServiceTask } from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { securitySuite } from '../../helpers/app/security-suite.ts';

const DAY = 86_400_000;
let t: TestApp;
let acme: TestTenant;
let oil: string;
let filters: string;
let foreign: { assetId: string; programId: string };

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  const other = await t.tenant('Other');
  oil = await makeServiceTask(t, acme.key, { name: 'Engine oil' });
  filters = await makeServiceTask(t, acme.key, { name: 'Hydraulic filters' });
  const taskId = await makeServiceTask(t, other.key);
  foreign = {
    assetId: await makeAsset(t, other.key),
    programId: await makeServiceProgram(t, other.key, [{ serviceTaskId: taskId, dayInterval: 30 }]),
  };
});
afterAll(() => t.close());

const reminder = async (id: string) =>
  (await t.api.get(`/api/v1/service-reminders/${id}`, acme.key)).json().serviceReminder;
const remindersOf = async (query: string) =>
  (await t.api.get(`/api/v1/service-reminders?${query}`, acme.key)).json().serviceReminders as Record<string, any>[];

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

securitySuite('service programs', () => ({ t, tenant: acme }), [
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
