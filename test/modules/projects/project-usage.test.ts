import { ensureMonths } from '../../../src/db/partitions.ts';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { makeAsset, makeProject } from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';

let t: TestApp;
let acme: TestTenant;
let other: TestTenant;

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  other = await t.tenant('Other');
});
afterAll(() => t.close());

const usage = async (projectId: string, query = '') => {
  const res = await t.api.get(`/api/v1/projects/${projectId}/equipment-usage${query}`, acme.key);
  expect(res.statusCode).toBe(200);
  return res.json().usage;
};

/** Meter logs as the hours API writes them: delta = this reading minus the asset's previous reading. */
async function logReadings(
  tenant: TestTenant,
  assetId: string,
  readings: { reading: number; projectId?: string | null; note?: string; at: string }[],
) {
  let previous: number | null = null;
  // Written below the service, so their months are created as the service would.
  await ensureMonths(
    t.db,
    'meter_logs',
    readings.map((r) => new Date(r.at)),
  );
  for (const r of readings) {
    await t.db.prisma.meterLog.create({
      data: {
        orgId: tenant.orgId,
        assetId,
        projectId: r.projectId ?? null,
        hoursReading: r.reading,
        delta: previous == null ? 0 : r.reading - previous,
        note: r.note ?? null,
        loggedAt: new Date(r.at),
        loggedById: tenant.userId,
      },
    });
    previous = r.reading;
  }
}

const newTool = (
  name: string,
  custody: { checkedOutAssetId?: string; checkedOutVehicleId?: string; checkedOutAt?: Date | null },
) => t.db.prisma.tool.create({ data: { orgId: acme.orgId, name, scanToken: randomUUID(), ...custody } });

describe('GET /projects/:id/equipment-usage', () => {
  let project: string;
  let otherProject: string;
  let excavator: string;
  let loader: string;
  let roller: string;
  const toolOutAt = new Date('2026-06-03T07:30:00.000Z');

  beforeAll(async () => {
    project = await makeProject(t, acme.key, { name: 'Bridge deck', code: 'BD-1', hourlyRate: 125.5 });
    otherProject = await makeProject(t, acme.key, { name: 'Car park', code: 'CP-1', hourlyRate: 90 });
    excavator = await makeAsset(t, acme.key, { nickname: 'Excavator 320' });
    loader = await makeAsset(t, acme.key, { nickname: 'Loader 950' });
    roller = await makeAsset(t, acme.key, { nickname: 'Roller CB4' });

    await logReadings(acme, excavator, [
      { reading: 1000, at: '2026-06-01T07:00:00Z' },
      { reading: 1008, projectId: project, at: '2026-06-01T16:00:00Z' },
      { reading: 1012.5, projectId: project, at: '2026-06-02T16:00:00Z' },
      {
        reading: 1010,
        projectId: project,
        note: 'Previous reading mistyped, meter shows 1010',
        at: '2026-06-03T08:00:00Z',
      },
      { reading: 1016, projectId: otherProject, at: '2026-06-04T16:00:00Z' },
      { reading: 1020, projectId: project, at: '2026-06-05T16:00:00Z' },
    ]);
    await logReadings(acme, loader, [
      { reading: 50, at: '2026-06-01T06:00:00Z' },
      { reading: 57.1, projectId: project, at: '2026-06-02T15:00:00Z' },
      { reading: 60.3, projectId: otherProject, at: '2026-06-03T15:00:00Z' },
    ]);

    // The excavator and the roller are on the project now; the loader worked there but was checked in.
    for (const assetId of [excavator, roller, loader]) {
      await t.api.post(`/api/v1/assets/${assetId}/checkout`, acme.key, { toProjectId: project, toUserId: acme.userId });
    }
    await t.api.post(`/api/v1/assets/${loader}/checkin`, acme.key, {});

    await t.db.prisma.repair.createMany({
      data: [
        { orgId: acme.orgId, assetId: excavator, projectId: project, cost: 250 },
        { orgId: acme.orgId, assetId: loader, projectId: project, cost: 100.25 },
        { orgId: acme.orgId, assetId: excavator, projectId: otherProject, cost: 999 },
        { orgId: acme.orgId, assetId: excavator, projectId: null, cost: 40 },
      ],
    });

    await newTool('Breaker hammer', { checkedOutAssetId: excavator, checkedOutAt: toolOutAt });
    await newTool('Compaction plate', { checkedOutVehicleId: roller, checkedOutAt: toolOutAt });
    await newTool('Bucket teeth kit', { checkedOutAssetId: loader, checkedOutAt: toolOutAt });
    await newTool('Spare hammer', { checkedOutAssetId: excavator, checkedOutAt: null });
  });

  it('sums log deltas per asset (a lower reading counts negative) and ignores logs of other projects', async () => {
    const u = await usage(project);
    expect(u).toMatchObject({
      projectId: project,
      projectName: 'Bridge deck',
      hourlyRateUsd: 125.5,
      totalHoursLogged: 21.1,
    });
    expect(u.assets).toEqual([
      {
        assetId: excavator,
        nickname: 'Excavator 320',
        hoursLogged: 14,
        lastLoggedAt: '2026-06-05T16:00:00.000Z',
        logCount: 4,
        currentlyOnProject: true,
        estimatedRevenueUsd: 1757,
      },
      {
        assetId: loader,
        nickname: 'Loader 950',
        hoursLogged: 7.1,
        lastLoggedAt: '2026-06-02T15:00:00.000Z',
        logCount: 1,
        currentlyOnProject: false,
        estimatedRevenueUsd: 891.05,
      },
      {
        assetId: roller,
        nickname: 'Roller CB4',
        hoursLogged: 0,
        lastLoggedAt: null,
        logCount: 0,
        currentlyOnProject: true,
        estimatedRevenueUsd: 0,
      },
    ]);
  });

  it('totals repair cost of the project and the revenue estimate (hours x rate)', async () => {
    const u = await usage(project);
    expect(u.totalRepairCostUsd).toBe(350.25);
    expect(u.estimatedRevenueUsd).toBe(2648.05);
  });

  it('lists the tools riding with an asset checked out to the project now', async () => {
    const u = await usage(project);
    expect(u.tools).toEqual([
      {
        toolId: expect.any(String),
        name: 'Breaker hammer',
        currentlyOnProject: true,
        checkedOutAt: toolOutAt.toISOString(),
        linkedAssetId: excavator,
      },
      {
        toolId: expect.any(String),
        name: 'Compaction plate',
        currentlyOnProject: true,
        checkedOutAt: toolOutAt.toISOString(),
        linkedAssetId: roller,
      },
    ]);
  });

  it('omits every revenue field when the project has no hourlyRate', async () => {
    await t.api.patch(`/api/v1/projects/${project}`, acme.key, { hourlyRate: null });
    const u = await usage(project);
    expect(u.hourlyRateUsd).toBeNull();
    expect(u).not.toHaveProperty('estimatedRevenueUsd');
    for (const a of u.assets) expect(a).not.toHaveProperty('estimatedRevenueUsd');
    expect(u.totalHoursLogged).toBe(21.1);
    await t.api.patch(`/api/v1/projects/${project}`, acme.key, { hourlyRate: 125.5 });
  });

  it('computes the other project from the same logs', async () => {
    const u = await usage(otherProject);
    expect(
      u.assets.map((a: { nickname: string; hoursLogged: number; currentlyOnProject: boolean }) => [
        a.nickname,
        a.hoursLogged,
        a.currentlyOnProject,
      ]),
    ).toEqual(
      [
        ['Excavator 320', 6],
        ['Loader 950', 3.2],
      ].map(([n, h]) => [n, h, false]),
    );
    expect(u).toMatchObject({ totalHoursLogged: 9.2, totalRepairCostUsd: 999, estimatedRevenueUsd: 828 });
    expect(u.tools).toEqual([]);
  });

  it('ignores rows of other organisations that point at the project', async () => {
    const theirs = await makeAsset(t, other.key, { nickname: 'Their dozer' });
    await logReadings(other, theirs, [
      { reading: 1, at: '2026-06-01T00:00:00Z' },
      { reading: 500, projectId: project, at: '2026-06-02T00:00:00Z' },
    ]);
    await t.db.prisma.repair.create({ data: { orgId: other.orgId, projectId: project, cost: 5000 } });
    const u = await usage(project);
    expect(u.totalHoursLogged).toBe(21.1);
    expect(u.totalRepairCostUsd).toBe(350.25);
    expect(u.assets.map((a: { assetId: string }) => a.assetId)).not.toContain(theirs);
  });

  it('is an empty rollup for a project without equipment, and 404 for an unknown one', async () => {
    const empty = await makeProject(t, acme.key, { name: 'Tender only' });
    expect(await usage(empty)).toEqual({
      projectId: empty,
      projectName: 'Tender only',
      hourlyRateUsd: null,
      totalHoursLogged: 0,
      totalRepairCostUsd: 0,
      assets: [],
      tools: [],
      assetCount: 0,
      assetsNextCursor: null,
      toolCount: 0,
      toolsNextCursor: null,
    });
    const missing = await t.api.get('/api/v1/projects/missing/equipment-usage', acme.key);
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ ok: false, error: 'not_found' });
  });

  it('pages the assets (most hours first) and the tools (by name) while the totals stay exact over all of them', async () => {
    const whole = await usage(project);
    expect(whole).toMatchObject({ assetCount: 3, assetsNextCursor: null, toolCount: 2, toolsNextCursor: null });
    const seen: string[] = [];
    let hours = 0;
    let cursor: string | null = null;
    do {
      const page = await usage(project, `?assetsLimit=1${cursor ? `&assetsCursor=${cursor}` : ''}`);
      expect(page.assets).toHaveLength(1);
      expect(page.totalHoursLogged).toBe(whole.totalHoursLogged);
      expect(page.assetCount).toBe(3);
      seen.push(page.assets[0].assetId);
      hours += page.assets[0].hoursLogged;
      cursor = page.assetsNextCursor;
    } while (cursor);
    expect(seen).toEqual(whole.assets.map((a: { assetId: string }) => a.assetId));
    expect(Math.round(hours * 100) / 100).toBe(whole.totalHoursLogged);

    const first = await usage(project, '?toolsLimit=1');
    expect(first.tools.map((x: { name: string }) => x.name)).toEqual(['Breaker hammer']);
    const second = await usage(project, `?toolsLimit=1&toolsCursor=${first.toolsNextCursor}`);
    expect(second.tools.map((x: { name: string }) => x.name)).toEqual(['Compaction plate']);
    expect(second.toolsNextCursor).toBeNull();
  });

  it('rejects a hand-made cursor with 422', async () => {
    const res = await t.api.get(
      `/api/v1/projects/${project}/equipment-usage?assetsCursor=${Buffer.from('["x"]').toString('base64url')}`,
      acme.key,
    );
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors).toHaveProperty('assetsCursor');
  });

  it('keeps the per-asset sums exact when a log is edited or deleted by hand (the rollup is recomputed)', async () => {
    const site = await makeProject(t, acme.key, { name: 'Rollup check' });
    const dozer = await makeAsset(t, acme.key, { nickname: 'Dozer D6' });
    await logReadings(acme, dozer, [
      { reading: 10, at: '2026-07-01T07:00:00Z' },
      { reading: 14, projectId: site, at: '2026-07-01T16:00:00Z' },
      { reading: 20, projectId: site, at: '2026-07-02T16:00:00Z' },
    ]);
    expect((await usage(site)).assets[0]).toMatchObject({
      assetId: dozer,
      hoursLogged: 10,
      logCount: 2,
      lastLoggedAt: '2026-07-02T16:00:00.000Z',
    });
    const last = await t.db.prisma.meterLog.findFirstOrThrow({
      where: { assetId: dozer, projectId: site },
      orderBy: { loggedAt: 'desc' },
    });
    await t.db.prisma.meterLog.updateMany({ where: { id: last.id }, data: { delta: 1.5 } });
    expect((await usage(site)).assets[0]).toMatchObject({ hoursLogged: 5.5, logCount: 2 });
    await t.db.prisma.meterLog.deleteMany({ where: { id: last.id } });
    expect((await usage(site)).assets[0]).toMatchObject({
      hoursLogged: 4,
      logCount: 1,
      lastLoggedAt: '2026-07-01T16:00:00.000Z',
    });
    expect((await usage(site)).totalHoursLogged).toBe(4);
  });
});
