import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { makeAsset } from '../../helpers/app/factories.ts';

let t: TestApp;
let acme: TestTenant;
let other: TestTenant;
let foreignAssetId: string;
const HOUR = 3600 * 1000;
const ago = (hours: number) => new Date(Date.now() - hours * HOUR).toISOString();

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  other = await t.tenant('Other');
  foreignAssetId = (
    await t.api.post('/api/v1/assets', other.key, { nickname: 'Theirs', assetClass: 'off-road' })
  ).json().assetId;
});
afterAll(() => t.close());

const newAsset = (body: Record<string, unknown> = {}, key = acme.key) =>
  makeAsset(t, key, { nickname: 'Excavator', ...body });
const log = (body: unknown, headers?: Record<string, string>, key = acme.key) =>
  t.api.post('/api/v1/hours', key, body, headers);
const assetRow = (id: string) => t.db.prisma.asset.findUniqueOrThrow({ where: { id } });
const logsOf = (assetId: string) => t.db.prisma.meterLog.findMany({ where: { assetId } });
const eventsOf = (type: string) => t.db.prisma.event.findMany({ where: { orgId: acme.orgId, type } });

describe('lower readings and anomalies go to manager review', () => {
  it('a lower reading needs a note (422) and, with one, is accepted as PENDING review', async () => {
    const assetId = await newAsset();
    await log({ assetId, hoursReading: 500, loggedAt: ago(48) });
    const missing = await log({ assetId, hoursReading: 20 });
    expect(missing.statusCode).toBe(422);
    expect(missing.json().fieldErrors.note).toMatch(/lower/);
    expect(await logsOf(assetId)).toHaveLength(1);
    const res = await log({ assetId, hoursReading: 20, note: 'Hour meter replaced' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ delta: -480, reviewStatus: 'PENDING' });
    const row = await t.db.prisma.meterLog.findFirstOrThrow({ where: { id: res.json().logId } });
    expect(row.reviewReason).toMatch(/lower than the previous reading 500/);
    expect((await assetRow(assetId)).lastMeterReading).toBe(20);
    const queue = (await t.api.get(`/api/v1/hours?reviewStatus=PENDING&assetId=${assetId}`, acme.key)).json().hoursLogs;
    expect(queue.map((l: { id: string }) => l.id)).toEqual([row.id]);
  });

  it('HOURS: more hours than elapsed wall time (+1 h grace) is accepted but held for review', async () => {
    const assetId = await newAsset();
    await log({ assetId, hoursReading: 100, loggedAt: ago(10) });
    const plausible = await log({ assetId, hoursReading: 104, loggedAt: ago(7) });
    expect(plausible.json().reviewStatus).toBe('NONE');
    const edge = await log({ assetId, hoursReading: 107.9, loggedAt: ago(4) });
    expect(edge.json().reviewStatus).toBe('NONE');
    const jump = await log({ assetId, hoursReading: 120, loggedAt: ago(2) });
    expect(jump.statusCode).toBe(201);
    expect(jump.json()).toMatchObject({ reviewStatus: 'PENDING', delta: 12.1 });
    const row = await t.db.prisma.meterLog.findFirstOrThrow({ where: { id: jump.json().logId } });
    expect(row.reviewReason).toMatch(/implausible/);
  });

  it('ODOMETER: a jump beyond an average of 100 mi/h is held for review', async () => {
    const assetId = await newAsset({ assetClass: 'on-road' });
    await log({ assetId, hoursReading: 10_000, loggedAt: ago(5) });
    expect((await log({ assetId, hoursReading: 10_150, loggedAt: ago(3) })).json().reviewStatus).toBe('NONE');
    const jump = await log({ assetId, hoursReading: 10_500, loggedAt: ago(2) });
    expect(jump.json().reviewStatus).toBe('PENDING');
  });

  it('a reading stamped before the previous one has no elapsed time: only the grace applies', async () => {
    const assetId = await newAsset();
    await log({ assetId, hoursReading: 100, loggedAt: ago(1) });
    expect((await log({ assetId, hoursReading: 100.5, loggedAt: ago(5) })).json().reviewStatus).toBe('NONE');
    expect((await log({ assetId, hoursReading: 103, loggedAt: ago(6) })).json().reviewStatus).toBe('PENDING');
  });

  it('PATCH approves or rejects a PENDING log once; other logs are 409', async () => {
    const assetId = await newAsset();
    await log({ assetId, hoursReading: 100, loggedAt: ago(3) });
    const normal = (await log({ assetId, hoursReading: 101, loggedAt: ago(2) })).json().logId;
    const held = (await log({ assetId, hoursReading: 90, note: 'typo earlier' })).json().logId;
    const bad = await t.api.patch(`/api/v1/hours/${held}`, acme.key, { reviewStatus: 'PENDING' });
    expect(bad.statusCode).toBe(422);
    const ok = await t.api.patch(`/api/v1/hours/${held}`, acme.key, { reviewStatus: 'REJECTED' });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({ ok: true, logId: held, reviewStatus: 'REJECTED', autoFlagId: null });
    const reviewed = (await t.api.get(`/api/v1/hours/${held}`, acme.key)).json().hoursLog;
    expect(reviewed).toMatchObject({ reviewStatus: 'REJECTED', reviewedById: acme.userId });
    expect(Date.now() - Date.parse(reviewed.reviewedAt)).toBeLessThan(60_000);
    expect((await assetRow(assetId)).lastMeterReading).toBe(90);
    expect((await t.api.patch(`/api/v1/hours/${held}`, acme.key, { reviewStatus: 'APPROVED' })).statusCode).toBe(409);
    const notHeld = await t.api.patch(`/api/v1/hours/${normal}`, acme.key, { reviewStatus: 'APPROVED' });
    expect(notHeld.statusCode).toBe(409);
    expect(notHeld.json().error).toBe('not_pending_review');
    expect((await t.api.patch('/api/v1/hours/nope', acme.key, { reviewStatus: 'APPROVED' })).statusCode).toBe(404);
  });
});

describe('preventive maintenance (AUTO_PM)', () => {
  it('opens one AUTO_PM flag when a reading crosses the next service point, and resolving it advances the baseline', async () => {
    const assetId = await newAsset({ pmInterval: 250, pmBaselineReading: 0 });
    expect((await log({ assetId, hoursReading: 240, loggedAt: ago(100) })).json().autoFlagId).toBeNull();
    const crossing = await log({ assetId, hoursReading: 260, loggedAt: ago(50) });
    const autoFlagId = crossing.json().autoFlagId;
    expect(autoFlagId).toEqual(expect.any(String));
    const flag = await t.db.prisma.flag.findUniqueOrThrow({ where: { id: autoFlagId } });
    expect(flag).toMatchObject({
      severity: 'AUTO_PM',
      status: 'OPEN',
      assetId,
      pmDueReading: 250,
      raisedById: 'system',
    });
    const created = (await eventsOf('flag.created')).find((e) => (e.data as { flagId: string }).flagId === autoFlagId);
    expect(created?.data).toMatchObject({
      flagId: autoFlagId,
      assetId,
      assetNickname: 'Excavator',
      severity: 'AUTO_PM',
      raisedBy: { userId: null, name: 'system' },
      pmDueReading: 250,
    });
    const logged = (await eventsOf('hours.logged')).find(
      (e) => (e.data as { logId: string }).logId === crossing.json().logId,
    );
    expect(logged?.data).toMatchObject({ autoFlagId });
    expect(await t.db.prisma.notification.count({ where: { dedupeKey: { startsWith: `flag:${autoFlagId}:` } } })).toBe(
      2,
    );
    const detail = (await t.api.get(`/api/v1/flags/${autoFlagId}`, acme.key)).json().flag;
    expect(detail).toMatchObject({
      severity: 'AUTO_PM',
      raisedById: 'system',
      raisedBy: { userId: null, name: 'system' },
      pmDueReading: 250,
    });

    // At most one open AUTO_PM per asset, even past the following service point.
    expect((await log({ assetId, hoursReading: 520, loggedAt: ago(10) })).json().autoFlagId).toBeNull();

    const resolved = await t.api.patch(`/api/v1/flags/${autoFlagId}`, acme.key, {
      status: 'RESOLVED',
      resolutionNote: 'Oil and filters changed',
    });
    expect(resolved.statusCode).toBe(200);
    expect((await t.api.get(`/api/v1/assets/${assetId}`, acme.key)).json().asset).toMatchObject({
      pmBaselineReading: 250,
      pmNextDueReading: 500,
    });

    const next = await log({ assetId, hoursReading: 521, loggedAt: ago(9.5) });
    const nextFlag = await t.db.prisma.flag.findUniqueOrThrow({ where: { id: next.json().autoFlagId } });
    expect(nextFlag.pmDueReading).toBe(500);
  });

  it('records the highest service point crossed when a reading jumps several intervals', async () => {
    const assetId = await newAsset({ pmInterval: 100 });
    const res = await log({ assetId, hoursReading: 350 });
    const flag = await t.db.prisma.flag.findUniqueOrThrow({ where: { id: res.json().autoFlagId } });
    expect(flag.pmDueReading).toBe(300);
  });

  it('a reading held for review opens no flag; approving it applies the PM check', async () => {
    const assetId = await newAsset({ pmInterval: 100, pmBaselineReading: 0 });
    await log({ assetId, hoursReading: 50, loggedAt: ago(2) });
    const held = await log({ assetId, hoursReading: 150, loggedAt: ago(1) });
    expect(held.json()).toMatchObject({ reviewStatus: 'PENDING', autoFlagId: null });
    const approved = await t.api.patch(`/api/v1/hours/${held.json().logId}`, acme.key, { reviewStatus: 'APPROVED' });
    const autoFlagId = approved.json().autoFlagId;
    expect(autoFlagId).toEqual(expect.any(String));
    expect((await t.db.prisma.meterLog.findFirstOrThrow({ where: { id: held.json().logId } })).autoFlagId).toBe(
      autoFlagId,
    );
  });

  it('assets without a PM interval never get AUTO_PM flags', async () => {
    const assetId = await newAsset();
    expect((await log({ assetId, hoursReading: 100_000 })).json().autoFlagId).toBeNull();
  });

  it('parallel readings crossing the service point open exactly one flag', async () => {
    const assetId = await newAsset({ pmInterval: 100, pmBaselineReading: 0 });
    await log({ assetId, hoursReading: 90, loggedAt: ago(1000) });
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => log({ assetId, hoursReading: 101 + i, note: 'parallel' })),
    );
    expect(results.every((r) => r.statusCode === 201)).toBe(true);
    expect(results.filter((r) => r.json().autoFlagId !== null)).toHaveLength(1);
    expect(await t.db.prisma.flag.count({ where: { assetId, severity: 'AUTO_PM' } })).toBe(1);
  });
});

describe('concurrency: deltas', () => {
  it('two simultaneous readings never see the same previous reading', async () => {
    const assetId = await newAsset();
    await log({ assetId, hoursReading: 100, loggedAt: ago(1000) });
    const readings = Array.from({ length: 10 }, (_, i) => 110 + i * 10);
    const results = await Promise.all(
      readings.map((hoursReading) => log({ assetId, hoursReading, note: 'concurrent' })),
    );
    expect(results.map((r) => r.statusCode)).toEqual(readings.map(() => 201));
    const logs = (await logsOf(assetId)).filter((l) => l.hoursReading !== 100);
    const previous = logs.map((l) => Math.round((l.hoursReading - l.delta) * 1e6) / 1e6);
    // Each reading's "previous" is a distinct earlier reading: the logs form one chain from 100.
    expect(new Set(previous).size).toBe(logs.length);
    expect(previous).toContain(100);
    const last = logs.find((l) => !previous.includes(l.hoursReading))!;
    expect((await assetRow(assetId)).lastMeterReading).toBe(last.hoursReading);
    expect(logs.reduce((sum, l) => sum + l.delta, 0)).toBeCloseTo(last.hoursReading - 100, 6);
  });
});

describe('idempotency', () => {
  it('a second POST with the same Idempotency-Key returns the original logId and writes nothing', async () => {
    const assetId = await newAsset();
    const first = await log({ assetId, hoursReading: 10 }, { 'idempotency-key': 'sync-001' });
    const events = (await eventsOf('hours.logged')).length;
    const again = await log({ assetId, hoursReading: 99 }, { 'idempotency-key': 'sync-001' });
    expect(again.statusCode).toBe(201);
    expect(again.json()).toMatchObject({ logId: first.json().logId, replayed: true });
    expect(await logsOf(assetId)).toHaveLength(1);
    expect((await eventsOf('hours.logged')).length).toBe(events);
    expect((await assetRow(assetId)).lastMeterReading).toBe(10);
  });

  it('the header wins over a body clientMutationId; the body key works on its own', async () => {
    const assetId = await newAsset();
    const withBoth = await log(
      { assetId, hoursReading: 1, clientMutationId: 'body-key' },
      { 'idempotency-key': 'header-key' },
    );
    expect(
      (await t.db.prisma.meterLog.findFirstOrThrow({ where: { id: withBoth.json().logId } })).clientMutationId,
    ).toBe('header-key');
    const bodyOnly = await log({ assetId, hoursReading: 2, clientMutationId: 'body-key' });
    expect(bodyOnly.json().replayed).toBe(false);
    const replay = await log({ assetId, hoursReading: 3, clientMutationId: 'body-key' });
    expect(replay.json()).toMatchObject({ logId: bodyOnly.json().logId, replayed: true });
    expect(await logsOf(assetId)).toHaveLength(2);
  });

  it('keys are unique per organisation', async () => {
    const mine = await newAsset();
    const a = await log({ assetId: mine, hoursReading: 1 }, { 'idempotency-key': 'shared-key' });
    const b = await log({ assetId: foreignAssetId, hoursReading: 50 }, { 'idempotency-key': 'shared-key' }, other.key);
    expect(b.json().replayed).toBe(false);
    expect(b.json().logId).not.toBe(a.json().logId);
  });

  it('the same key sent 10 times in parallel creates one row', async () => {
    const assetId = await newAsset();
    const results = await Promise.all(
      Array.from({ length: 10 }, () => log({ assetId, hoursReading: 42 }, { 'idempotency-key': 'parallel-key' })),
    );
    expect(results.map((r) => r.statusCode)).toEqual(Array(10).fill(201));
    expect(new Set(results.map((r) => r.json().logId)).size).toBe(1);
    expect(results.filter((r) => !r.json().replayed)).toHaveLength(1);
    expect(await logsOf(assetId)).toHaveLength(1);
    const logId = results[0].json().logId;
    expect((await eventsOf('hours.logged')).filter((e) => (e.data as { logId: string }).logId === logId)).toHaveLength(
      1,
    );
  });

  it('the same key on different assets in parallel still creates one row', async () => {
    const assets = await Promise.all(Array.from({ length: 5 }, () => newAsset()));
    const results = await Promise.all(
      assets.map((assetId) => log({ assetId, hoursReading: 7 }, { 'idempotency-key': 'cross-asset' })),
    );
    expect(results.map((r) => r.statusCode)).toEqual(Array(5).fill(201));
    expect(new Set(results.map((r) => r.json().logId)).size).toBe(1);
    expect(await t.db.prisma.meterLog.count({ where: { orgId: acme.orgId, clientMutationId: 'cross-asset' } })).toBe(1);
  });
});
