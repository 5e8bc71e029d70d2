// The meter-reading import writes through the hours service's batch path. The proof that it does what POST /hours
// does: one organisation imports a file (its commit cut short and resumed), a second one posts the same readings to
// POST /hours one by one, and both end with the same database, ids and timestamps of writing aside.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import {
  makeAsset,
  makeHoursLog,
  makeProject,
  makeServiceProgram,
  makeServiceReminder,
  makeServiceTask,
  makeWebhook,
} from '../../helpers/app/factories.ts';
import { importOf, startImport } from '../../helpers/app/imports.ts';
import { CreateHoursBody } from '../../../src/modules/hours/hours.schemas.ts';
import { BatchEntryError } from '../../../src/modules/hours/hours-batch.operations.ts';
import { readingKey } from '../../../src/modules/imports/import-meter-readings-commit.operations.ts';
import { importContext } from '../../../src/modules/imports/import-lifecycle.operations.ts';

const HOUR = 3_600_000;
/** Readings over the last days: inside the reminders' 30-day window of use, whenever the test runs. */
const BASE = Math.floor((Date.now() - 20 * 24 * HOUR) / HOUR) * HOUR;
const at = (hours: number) => new Date(BASE + hours * HOUR).toISOString();

let t: TestApp;
let batch: TestTenant;
let single: TestTenant;

interface Reading {
  asset: string;
  hours: number;
  reading?: number;
  state?: string;
  note?: string;
  project?: boolean;
}

/**
 * D-1 crosses its AUTO_PM service points (one flag opens, then stays open), with a project on some readings;
 * L-1 has a stored reading and two reminders, one from a program that opens work orders, crossing due-soon and
 * overdue; R-1's reminder awaits its first reading; T-1 (odometer) logs a jump held for review and a lower reading
 * with a note; N-1 has no meter and logs states.
 */
const READINGS: Reading[] = [];
for (let i = 1; i <= 12; i++) {
  READINGS.push({ asset: 'D-1', hours: i * 10, reading: 40 + i * 9, project: i % 3 === 0 });
  READINGS.push({ asset: 'L-1', hours: i * 10 + 1, reading: 5 + i * 6 });
  READINGS.push({ asset: 'R-1', hours: i * 10 + 2, reading: 300 + i * 4 });
  const odometer = i === 5 ? 9000 : i === 6 ? 1990 : 1000 + i * 200;
  READINGS.push({ asset: 'T-1', hours: i * 10 + 3, reading: odometer, note: i === 6 ? 'odometer swapped' : undefined });
  READINGS.push({ asset: 'N-1', hours: i * 10 + 4, state: i % 2 ? 'parked at yard' : 'on site' });
}

/** The same organisation in each tenant: assets, a project, reminders, a program and a webhook. */
async function world(tenant: TestTenant) {
  const key = tenant.key;
  const ids: Record<string, string> = {};
  ids['D-1'] = await makeAsset(t, key, { nickname: 'Dozer', customerAssetNumber: 'D-1', pmInterval: 100 });
  ids['L-1'] = await makeAsset(t, key, { nickname: 'Loader', customerAssetNumber: 'L-1' });
  ids['R-1'] = await makeAsset(t, key, { nickname: 'Roller', customerAssetNumber: 'R-1' });
  ids['T-1'] = await makeAsset(t, key, {
    nickname: 'Truck',
    customerAssetNumber: 'T-1',
    assetClass: 'on-road',
    meterType: 'ODOMETER',
    pmInterval: 2000,
  });
  ids['N-1'] = await makeAsset(t, key, {
    nickname: 'Trailer',
    customerAssetNumber: 'N-1',
    assetClass: 'trailer',
    meterType: 'NONE',
  });
  const project = await makeProject(t, key);
  await makeHoursLog(t, key, ids['L-1']!, 5, { loggedAt: at(-24) });
  const oil = await makeServiceTask(t, key);
  const grease = await makeServiceTask(t, key, { name: 'Grease' });
  await makeServiceReminder(t, key, ids['L-1']!, grease, { meterInterval: 30, dueSoonMeter: 5 });
  await makeServiceReminder(t, key, ids['R-1']!, grease, { meterInterval: 20 });
  const program = await makeServiceProgram(t, key, [{ serviceTaskId: oil, meterInterval: 50, dueSoonMeter: 10 }], {
    autoWorkOrder: true,
  });
  await t.api.post(`/api/v1/service-programs/${program}/assets`, key, { assetIds: [ids['L-1']] });
  await makeWebhook(t, key, {
    events: ['hours.logged', 'flag.created', 'service_reminder.due_soon', 'service_reminder.overdue'],
  });
  return { ids, project };
}

const csvOf = (project: string) =>
  [
    'customerAssetNumber,loggedAt,hoursReading,state,note,projectId',
    ...READINGS.map((r) =>
      [r.asset, at(r.hours), r.reading ?? '', r.state ?? '', r.note ?? '', r.project ? project : ''].join(','),
    ),
  ].join('\n');

const omit = (row: Record<string, unknown>, keys: string[]) =>
  Object.fromEntries(Object.entries(row).filter(([k]) => !keys.includes(k)));
const WRITE_TIMES = ['createdAt', 'updatedAt', 'raisedAt'];
/** The events readings cause (the organisation's set-up raised others, the same in both). */
const READING_EVENTS = [
  'hours.logged',
  'flag.created',
  'service_reminder.due_soon',
  'service_reminder.overdue',
  'workorder.created',
];
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** What the readings changed in an organisation, its ids replaced by names and the times of writing left out. */
async function stateOf(tenant: TestTenant) {
  const where = { where: { orgId: tenant.orgId } };
  const p = t.db.prisma;
  const [assets, logs, flags, reminders, tasks, workOrders, links, notifications, events, deliveries] =
    await Promise.all([
      p.asset.findMany(where),
      p.meterLog.findMany(where),
      p.flag.findMany(where),
      p.serviceReminder.findMany(where),
      p.serviceTask.findMany(where),
      p.workOrder.findMany(where),
      p.workOrderServiceReminder.findMany(where),
      p.notification.findMany(where),
      p.event.findMany({ where: { orgId: tenant.orgId, type: { in: READING_EVENTS } } }),
      p.webhookDelivery.groupBy({ by: ['eventType'], where: { orgId: tenant.orgId }, _count: true }),
    ]);
  const names = new Map<string, string>([
    [tenant.orgId, 'org'],
    [tenant.userId, 'user'],
  ]);
  const asset = new Map(assets.map((a) => [a.id, a.customerAssetNumber!]));
  for (const a of assets) names.set(a.id, `asset:${a.customerAssetNumber}`);
  for (const task of tasks) names.set(task.id, `task:${task.name}`);
  for (const r of reminders) names.set(r.id, `reminder:${asset.get(r.assetId)}:${names.get(r.serviceTaskId)}`);
  for (const f of flags) names.set(f.id, `flag:${asset.get(f.assetId)}:${f.pmDueReading}`);
  for (const w of workOrders) names.set(w.id, `workorder:${w.number}`);
  for (const l of logs) names.set(l.id, `log:${asset.get(l.assetId)}:${l.loggedAt.toISOString()}`);
  const sorted = <T>(rows: T[]) => rows.map((r) => omit(r as Record<string, unknown>, WRITE_TIMES));
  const text = JSON.stringify({
    assets: sorted(assets),
    logs: sorted(logs.map((l) => omit(l, ['source', 'sourceId']))),
    flags: sorted(flags),
    reminders: sorted(reminders),
    workOrders: sorted(workOrders),
    links: sorted(links),
    notifications: sorted(notifications.map((n) => ({ channel: n.channel, kind: n.kind, subject: n.subject }))),
    events: sorted(
      events.map((e) => {
        const data = omit(e.data as Record<string, unknown>, WRITE_TIMES);
        return { type: e.type, data: omit(data, e.type === 'hours.logged' ? ['source', 'sourceId'] : []) };
      }),
    ),
    deliveries: sorted(deliveries.map((d) => ({ type: d.eventType, n: d._count }))),
  });
  let named = text;
  for (const [id, name] of names) named = named.replaceAll(id, name);
  // Sorted once named: rows in an order that does not depend on ids or write times.
  const state = JSON.parse(named.replace(UUID, '<unnamed id>')) as Record<string, unknown[]>;
  return Object.fromEntries(Object.entries(state).map(([k, rows]) => [k, rows.map((r) => JSON.stringify(r)).sort()]));
}

beforeAll(async () => {
  t = await createTestApp();
  batch = await t.tenant('Batch');
  single = await t.tenant('Single');
});
afterAll(() => t.close());

describe('meter readings committed through the batch path', () => {
  it('leave the database as POST /hours one reading at a time does, through a resumed commit', async () => {
    const b = await world(batch);
    const s = await world(single);
    const id = (await startImport(t, batch.key, 'meter_readings', csvOf(b.project))).json().importId as string;
    expect(await importOf(t, batch.key, id)).toMatchObject({
      status: 'validated',
      counts: { create: READINGS.length, error: 0 },
    });

    // A commit whose process stopped after writing the first half (in time order) and before marking it written.
    const rows = await t.db.prisma.importRow.findMany({ where: { importId: id }, orderBy: { rowNumber: 'asc' } });
    expect(rows.map((r) => r.rowNumber)).toEqual(READINGS.map((_, i) => i + 2));
    const imp = await t.db.prisma.import.update({
      where: { id },
      data: { status: 'committing', commitPhase: 'write', committedByKeyId: batch.keyId, rowsTotal: rows.length },
    });
    const firstHalf = new Map<string, typeof rows>();
    for (const row of rows.slice(0, rows.length / 2))
      firstHalf.set(row.targetId!, [...(firstHalf.get(row.targetId!) ?? []), row]);
    for (const [assetId, group] of firstHalf) {
      const readings = group.map((row) => ({
        input: CreateHoursBody.parse({ ...(row.values as object), assetId }),
        key: readingKey(id, row.rowNumber),
      }));
      await t.deps.services.hours.recordBatch(importContext(imp), assetId, readings, { source: 'import', id });
    }
    await t.db.prisma.import.update({ where: { id }, data: { leaseUntil: new Date(0) } });
    expect(await t.deps.services.imports.tick()).toBeGreaterThanOrEqual(1);
    expect(await importOf(t, batch.key, id)).toMatchObject({ status: 'completed', counts: { create: rows.length } });

    for (const [i, r] of READINGS.entries()) {
      const res = await t.api.post('/api/v1/hours', single.key, {
        assetId: s.ids[r.asset],
        loggedAt: at(r.hours),
        ...(r.reading !== undefined ? { hoursReading: r.reading } : {}),
        ...(r.state ? { state: r.state } : {}),
        ...(r.note ? { note: r.note } : {}),
        ...(r.project ? { projectId: s.project } : {}),
        clientMutationId: readingKey(id, i + 2),
      });
      expect(res.statusCode).toBe(201);
    }

    const logs = await t.db.prisma.meterLog.findMany({ where: { orgId: batch.orgId, NOT: { source: 'api' } } });
    expect(logs).toHaveLength(READINGS.length);
    expect(new Set(logs.map((l) => `${l.source}:${l.sourceId}`))).toEqual(new Set([`import:${id}`]));
    const written = await t.db.prisma.importRow.findMany({ where: { importId: id, written: true } });
    expect(new Set(written.map((w) => w.resultId))).toEqual(new Set(logs.map((l) => l.id)));

    const [imported, posted] = [await stateOf(batch), await stateOf(single)];
    expect(imported).toEqual(posted);
    // What the comparison covered: the crossings happened.
    expect(posted.flags).toHaveLength(2);
    expect(posted.workOrders).toHaveLength(1);
    expect(posted.events.filter((e) => e.includes('service_reminder.'))).toHaveLength(4);
    expect(posted.logs.filter((l) => l.includes('"reviewStatus":"PENDING"'))).toHaveLength(2);
  });

  it('fails the commit and writes nothing when a reading no longer passes the rules of POST /hours', async () => {
    const assetId = await makeAsset(t, batch.key, { nickname: 'Grader', customerAssetNumber: 'G-1' });
    await makeAsset(t, batch.key, { nickname: 'Paver', customerAssetNumber: 'P-1' });
    const csv = `customerAssetNumber,loggedAt,hoursReading\nP-1,${at(2)},10\nG-1,${at(1)},10\nG-1,${at(3)},12\n`;
    const id = (await startImport(t, batch.key, 'meter_readings', csv)).json().importId as string;
    // An earlier but higher reading arrives after validation: the file's first G-1 reading is now lower, without
    // the note POST /hours asks for.
    await makeHoursLog(t, batch.key, assetId, 50, { loggedAt: at(0) });
    expect((await t.api.post(`/api/v1/imports/${id}/commit`, batch.key)).statusCode).toBe(202);
    const imp = await importOf(t, batch.key, id);
    expect(imp.status).toBe('failed');
    expect(imp.failureReason).toMatch(
      /row 3: is required to explain a reading lower.*what the commit wrote was undone/,
    );
    expect(await t.db.prisma.meterLog.count({ where: { orgId: batch.orgId, sourceId: id } })).toBe(0);
  });
});

describe('the hours batch path', () => {
  it('names the refused entry, writes nothing, and replays a key given twice', async () => {
    const assetId = await makeAsset(t, single.key, { nickname: 'Crane', customerAssetNumber: 'C-1' });
    const ctx = { orgId: single.orgId, actorId: single.userId, keyId: single.keyId, requestId: 'test' };
    const reading = (hoursReading: number, hours: number, key: string | null) => ({
      input: CreateHoursBody.parse({ assetId, hoursReading, loggedAt: at(hours) }),
      key,
    });
    const refused = await t.deps.services.hours
      .recordBatch(ctx, assetId, [reading(10, 1, null), reading(12, 2, null), reading(8, 3, null)], {
        source: 'api',
        id: null,
      })
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(BatchEntryError);
    expect(refused).toMatchObject({ index: 2, fieldErrors: { note: expect.stringMatching(/lower/) } });
    expect(await t.db.prisma.meterLog.count({ where: { assetId } })).toBe(0);

    const done = await t.deps.services.hours.recordBatch(
      ctx,
      assetId,
      [reading(10, 1, 'k-1'), reading(11, 2, 'k-1'), reading(12, 3, 'k-2')],
      { source: 'api', id: null },
    );
    expect(done.map((d) => d.replayed)).toEqual([false, true, false]);
    expect(done[1]!.logId).toBe(done[0]!.logId);
    const asset = await t.db.prisma.asset.findUniqueOrThrow({ where: { id: assetId } });
    expect([asset.lastMeterReading, asset.lastMeterAt?.toISOString()]).toEqual([12, at(3)]);
  });

  it('writes a batch longer than one statement, each reading once, in order, with its event', async () => {
    const assetId = await makeAsset(t, single.key, { nickname: 'Dozer', customerAssetNumber: 'D-1' });
    const ctx = { orgId: single.orgId, actorId: single.userId, keyId: single.keyId, requestId: 'test' };
    // 450 readings: three statements' worth, with a key given again past the first statement.
    const readings = Array.from({ length: 450 }, (_, i) => ({
      input: CreateHoursBody.parse({ assetId, hoursReading: 100 + i, loggedAt: at(i + 1) }),
      key: `long-${i}`,
    }));
    readings.splice(300, 0, { ...readings[250]! });
    const done = await t.deps.services.hours.recordBatch(ctx, assetId, readings, { source: 'api', id: null });
    expect(done.filter((d) => d.replayed)).toHaveLength(1);
    expect(done[300]!.logId).toBe(done[250]!.logId);
    const logs = await t.db.prisma.meterLog.findMany({ where: { assetId }, orderBy: { loggedAt: 'asc' } });
    expect(logs.map((l) => l.hoursReading)).toEqual(
      readings.filter((_, i) => i !== 300).map((r) => r.input.hoursReading),
    );
    const events = await t.db.prisma.event.count({
      where: { orgId: single.orgId, type: 'hours.logged', data: { path: ['assetId'], equals: assetId } },
    });
    expect(events).toBe(450);
    const asset = await t.db.prisma.asset.findUniqueOrThrow({ where: { id: assetId } });
    expect([asset.lastMeterReading, asset.lastMeterAt?.toISOString()]).toEqual([549, at(450)]);
  });
});
