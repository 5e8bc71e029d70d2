// Test data made the way a client makes it: through the API, so every row carries the events, audit entries and
// defaults the services add. Each factory sends a minimal valid body merged with `overrides`, throws when the API
// does not answer 201 (setup that silently failed makes a later assertion lie), and returns the new id.
// Tests whose subject is the create call itself (validation, security, status codes) call the API directly.
import type { Res, TestApp } from './test-app.ts';

/** Any app with a test client: the usual TestApp, or a second instance a test starts beside it. */
type WithApi = Pick<TestApp, 'api'>;
type Body = Record<string, unknown>;

/** The 201 body of a create call, or an error naming the call, the status and the body. */
export function expectCreated<T = Record<string, any>>(res: Res, what: string): T {
  if (res.statusCode !== 201) throw new Error(`${what}: expected 201, got ${res.statusCode} ${res.body}`);
  return res.json<T>();
}

async function create<T>(t: WithApi, key: string, path: string, body: Body): Promise<T> {
  return expectCreated<T>(await t.api.post(`/api/v1/${path}`, key, body), `POST /api/v1/${path}`);
}

/** An off-road machine (HOURS meter) unless `overrides` say otherwise. */
export async function makeAsset(t: WithApi, key: string, overrides: Body = {}): Promise<string> {
  const body = { nickname: 'Excavator 1', assetClass: 'off-road', ...overrides };
  return (await create<{ assetId: string }>(t, key, 'assets', body)).assetId;
}

export async function makeTool(t: WithApi, key: string, overrides: Body = {}): Promise<string> {
  return (await create<{ toolId: string }>(t, key, 'tools', { name: 'Drill', ...overrides })).toolId;
}

export async function makeProject(t: WithApi, key: string, overrides: Body = {}): Promise<string> {
  return (await create<{ projectId: string }>(t, key, 'projects', { name: 'Depot rebuild', ...overrides })).projectId;
}

/** Yard names are unique within an organisation: pass `name` when a test makes more than one. */
export async function makeYard(t: WithApi, key: string, overrides: Body = {}): Promise<string> {
  return (await create<{ yardId: string }>(t, key, 'yards', { name: 'Main yard', ...overrides })).yardId;
}

/** A RED flag on `assetId`. */
export async function makeFlag(t: WithApi, key: string, assetId: string, overrides: Body = {}): Promise<string> {
  return (await create<{ flagId: string }>(t, key, 'flags', { assetId, severity: 'RED', ...overrides })).flagId;
}

export async function makeWorkOrder(t: WithApi, key: string, overrides: Body = {}): Promise<string> {
  const body = { title: 'Fix it', ...overrides };
  return (await create<{ workOrderId: string }>(t, key, 'work-orders', body)).workOrderId;
}

export async function makeRepair(t: WithApi, key: string, overrides: Body): Promise<string> {
  return (await create<{ repairId: string }>(t, key, 'repairs', overrides)).repairId;
}

/** A meter reading on `assetId`; returns the log id. */
export async function makeHoursLog(
  t: WithApi,
  key: string,
  assetId: string,
  hoursReading: number,
  overrides: Body = {},
): Promise<string> {
  return (await create<{ logId: string }>(t, key, 'hours', { assetId, hoursReading, ...overrides })).logId;
}

/** Returns the signing secret too: the API shows it only in this answer. */
export async function makeWebhook(
  t: WithApi,
  key: string,
  overrides: Body = {},
): Promise<{ subscriptionId: string; secret: string }> {
  const body = { url: 'https://127.0.0.1:9/hook', events: ['asset.created'], ...overrides };
  const { subscriptionId, secret } = await create<{ subscriptionId: string; secret: string }>(t, key, 'webhooks', body);
  return { subscriptionId, secret };
}

export async function makeUser(t: WithApi, key: string, overrides: Body = {}): Promise<string> {
  const body = { email: `person-${Math.random().toString(36).slice(2, 10)}@example.com`, ...overrides };
  return (await create<{ userId: string }>(t, key, 'users', body)).userId;
}

export async function makeServiceTask(t: WithApi, key: string, overrides: Body = {}): Promise<string> {
  const body = { name: 'Engine oil and filter', ...overrides };
  return (await create<{ serviceTaskId: string }>(t, key, 'service-tasks', body)).serviceTaskId;
}

/** A reminder of `serviceTaskId` on `assetId`; pass the schedule (meterInterval and/or dayInterval) in `overrides`. */
export async function makeServiceReminder(
  t: WithApi,
  key: string,
  assetId: string,
  serviceTaskId: string,
  overrides: Body = { meterInterval: 250 },
): Promise<string> {
  const body = { assetId, serviceTaskId, ...overrides };
  return (await create<{ serviceReminderId: string }>(t, key, 'service-reminders', body)).serviceReminderId;
}

export async function makeServiceProgram(
  t: WithApi,
  key: string,
  items: Body[],
  overrides: Body = {},
): Promise<string> {
  const body = { name: 'Excavator A-service', items, ...overrides };
  return (await create<{ serviceProgramId: string }>(t, key, 'service-programs', body)).serviceProgramId;
}

/** Part numbers are unique within an organisation (any case): pass `number` when a test makes more than one. */
export async function makePart(t: WithApi, key: string, overrides: Body = {}): Promise<string> {
  const body = { number: 'FLT-100', name: 'Oil filter', ...overrides };
  return (await create<{ partId: string }>(t, key, 'parts', body)).partId;
}
