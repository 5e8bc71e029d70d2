import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { makeAsset, makeServiceReminder, makeServiceTask } from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { securitySuite } from '../../helpers/app/security-suite.ts';

let t: TestApp;
let acme: TestTenant;
let foreign: { taskId: string };

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  const other = await t.tenant('Other');
  foreign = { taskId: await makeServiceTask(t, other.key) };
});
afterAll(() => t.close());

const reminder = async (id: string) =>
  (await t.api.get(`/api/v1/service-reminders/${id}`, acme.key)).json().serviceReminder;

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

securitySuite('service tasks', () => ({ t, tenant: acme }), [
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
]);
