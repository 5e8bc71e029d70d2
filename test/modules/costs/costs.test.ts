import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import {
  expectCreated,
  makeAsset,
  makeHoursLog,
  makeProject,
  makeRepair,
  makeWorkOrder,
  makeYard,
} from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { securitySuite } from '../../helpers/app/security-suite.ts';

// One period around today (repairs count by their creation, which is now): 2026-01-01 to 2026-12-01.
const FROM = '2026-01-01T00:00:00.000Z';
const TO = '2026-12-01T00:00:00.000Z';

let t: TestApp;
let acme: TestTenant;
let other: TestTenant;
let truck: string;
let dozer: string;
let foreignAsset: string;
let quarry: string;
let bridge: string;
let northYard: string;

const post = async (path: string, body: Record<string, unknown>) =>
  expectCreated(await t.api.post(`/api/v1/${path}`, acme.key, body), path);

/** Lines come from the parts module; written here as its operations write them. */
async function addLines(workOrderId: string, part: string, labor: string, at: string) {
  const partId = randomUUID();
  await t.db.sql.query(`INSERT INTO parts (id, "orgId", number, name) VALUES ($1, $2, $3, 'Filter')`, [
    partId,
    acme.orgId,
    `P-${partId.slice(0, 8)}`,
  ]);
  await t.db.sql.query(
    `INSERT INTO work_order_part_lines (id, "orgId", "workOrderId", "partId", quantity, "unitCost", "totalCost", tracked, "createdAt")
     VALUES ($1, $2, $3, $4, 2, $5::numeric / 2, $5::numeric, true, $6::timestamptz)`,
    [randomUUID(), acme.orgId, workOrderId, partId, part, at],
  );
  await t.db.sql.query(
    `INSERT INTO work_order_labor_lines (id, "orgId", "workOrderId", hours, rate, "totalCost", "createdAt")
     VALUES ($1, $2, $3, 1, $4::numeric, $4::numeric, $5::timestamptz)`,
    [randomUUID(), acme.orgId, workOrderId, labor, at],
  );
}

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  other = await t.tenant('Other');
  foreignAsset = await makeAsset(t, other.key);
  quarry = await makeProject(t, acme.key, { name: 'Quarry' });
  bridge = await makeProject(t, acme.key, { name: 'Bridge' });
  northYard = await makeYard(t, acme.key, { name: 'North' });

  // The truck: odometer (mi), straight line 36,500 - 1,500 salvage over 5 years = 7,000 a year.
  truck = await makeAsset(t, acme.key, { nickname: 'Truck 12', assetClass: 'on-road' });
  await t.api.patch(`/api/v1/assets/${truck}`, acme.key, {
    purchaseCost: 36500,
    purchaseDate: '2025-01-01',
    usefulLifeYears: 5,
    depreciationMethod: 'STRAIGHT_LINE',
    salvageValue: 1500,
  });
  await makeHoursLog(t, acme.key, truck, 10000, { loggedAt: '2025-12-20T08:00:00Z' });
  const fill = (over: Record<string, unknown>) =>
    post('fuel-entries', { assetId: truck, unit: 'GALLON', ...over }).then((r) => r.fuelEntryId as string);
  await fill({ fueledAt: '2026-01-10T08:00:00Z', volume: 20, totalCost: 70, meterReading: 10100 });
  await fill({ fueledAt: '2026-01-20T08:00:00Z', volume: 10, pricePerUnit: 3.499, meterReading: 10250, partial: true });
  // The seed's way: fuel on a meter log, a full fill in US gallons.
  await makeHoursLog(t, acme.key, truck, 10400, {
    loggedAt: '2026-02-01T08:00:00Z',
    fuelVolume: 15,
    fuelCostTotal: 52.5,
  });
  const typo = await fill({ fueledAt: '2026-02-10T08:00:00Z', volume: 5, totalCost: 17.5, meterReading: 50000 });
  await t.api.patch(`/api/v1/fuel-entries/${typo}`, acme.key, { void: true });
  await fill({
    fueledAt: '2026-02-20T08:00:00Z',
    volume: 20,
    unit: 'LITER',
    totalCost: 20,
    meterReading: 10500,
    note: 'after the typo',
  });
  await fill({ fueledAt: '2026-03-15T08:00:00Z', volume: 8, unit: 'LITER', totalCost: 8, partial: true });
  const deleted = await fill({ fueledAt: '2026-03-16T08:00:00Z', volume: 8, totalCost: 999 });
  await t.api.delete(`/api/v1/fuel-entries/${deleted}`, acme.key);
  await makeHoursLog(t, acme.key, truck, 10600, { loggedAt: '2026-03-30T08:00:00Z' });
  await post('expenses', {
    assetId: truck,
    type: 'insurance',
    amount: 1250.1,
    incurredAt: '2026-03-01',
    projectId: quarry,
  });
  await post('expenses', { assetId: truck, type: 'tolls', amount: 5, incurredAt: '2025-12-15' });
  // A work order with lines: its repair's cost is not counted again.
  const withLines = await makeWorkOrder(t, acme.key, { assetId: truck, projectId: quarry });
  await addLines(withLines, '200.00', '150.50', '2026-05-01T00:00:00Z');
  await makeRepair(t, acme.key, { workOrderId: withLines, cost: 999 });
  await makeRepair(t, acme.key, { assetId: truck, cost: 80.25 });
  const noLines = await makeWorkOrder(t, acme.key, { assetId: truck, projectId: bridge });
  await makeRepair(t, acme.key, { workOrderId: noLines, cost: 45.5 });

  // The dozer: hours meter, in the north yard, fuel on meter logs and one fuel entry.
  dozer = await makeAsset(t, acme.key, { nickname: 'Dozer 3', yardId: northYard });
  await makeHoursLog(t, acme.key, dozer, 100, {
    loggedAt: '2026-02-01T08:00:00Z',
    fuelVolume: 40,
    fuelUnit: 'LITER',
    fuelCostTotal: 60,
  });
  await makeHoursLog(t, acme.key, dozer, 110, {
    loggedAt: '2026-02-02T08:00:00Z',
    fuelVolume: 30,
    fuelUnit: 'LITER',
    fuelCostTotal: 45.3,
  });
  await post('fuel-entries', {
    assetId: dozer,
    fueledAt: '2026-02-03T08:00:00Z',
    volume: 24,
    unit: 'LITER',
    totalCost: 36,
    meterReading: 118,
    projectId: quarry,
  });
  await makeAsset(t, acme.key, { nickname: 'Trailer', assetClass: 'trailer' });
});
afterAll(() => t.close());

const get = (path: string) => t.api.get(`/api/v1/${path}`, acme.key);
const report = async (query: string) => {
  const res = await get(`reports/costs?from=${FROM}&to=${TO}&${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};

const TRUCK = {
  fuel: 202.99,
  parts: 200,
  labor: 150.5,
  repairs: 125.75,
  expenses: 1250.1,
  depreciation: 6405.48,
  total: 8334.82,
  meterStart: 10000,
  meterEnd: 10600,
  meterDelta: 600,
  meterUnit: 'mi',
  costPerMeterUnit: 13.89,
  fuelVolumeLiters: 217.27,
  fuelEconomy: { kmPerLiter: 4.82, mpgUs: 11.34 },
};
const DOZER = {
  fuel: 141.3,
  parts: 0,
  labor: 0,
  repairs: 0,
  expenses: 0,
  depreciation: 0,
  total: 141.3,
  meterStart: 100,
  meterEnd: 118,
  meterDelta: 18,
  meterUnit: 'hrs',
  costPerMeterUnit: 7.85,
  fuelVolumeLiters: 94,
  fuelEconomy: { litersPerHour: 3 },
};

describe('GET /assets/:id/costs', () => {
  it('adds every source once, to the cent: fuel entries and meter-log fuel, lines instead of their repair', async () => {
    const res = await get(`assets/${truck}/costs?from=${FROM}&to=${TO}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ ok: true, assetId: truck, from: FROM, to: TO, currency: 'USD', ...TRUCK });
    expect((await get(`assets/${dozer}/costs?from=${FROM}&to=${TO}`)).json()).toMatchObject(DOZER);
  });

  it('defaults to the last 365 days and answers zeros and nulls for an asset without costs', async () => {
    const idle = await makeAsset(t, acme.key, { nickname: 'Idle' });
    const body = (await get(`assets/${idle}/costs`)).json();
    expect(new Date(body.to).getTime() - new Date(body.from).getTime()).toBe(365 * 86_400_000);
    expect(body).toMatchObject({ total: 0, meterDelta: null, costPerMeterUnit: null, fuelEconomy: null });
  });

  it('rejects a period over ten years or ending before it starts (422), and unknown assets (404)', async () => {
    expect((await get(`assets/${truck}/costs?from=2010-01-01&to=2026-01-01`)).statusCode).toBe(422);
    expect((await get(`assets/${truck}/costs?from=2026-02-01&to=2026-01-01`)).statusCode).toBe(422);
    expect((await get(`assets/${foreignAsset}/costs`)).statusCode).toBe(404);
  });
});

describe('the meter type of an asset', () => {
  it('is fixed at creation: a PATCH naming meterType leaves it, and figures keep the meter unit', async () => {
    const res = await t.api.patch(`/api/v1/assets/${dozer}`, acme.key, { meterType: 'ODOMETER', nickname: 'Dozer 3' });
    expect(res.statusCode).toBe(200);
    expect((await get(`assets/${dozer}`)).json().asset.meterType).toBe('HOURS');
    expect((await get(`assets/${dozer}/costs?from=${FROM}&to=${TO}`)).json()).toMatchObject({
      meterUnit: 'hrs',
      fuelEconomy: { litersPerHour: 3 },
    });
  });
});

describe('GET /reports/costs', () => {
  it('by asset: one row per asset with costs, each equal to its /costs, most expensive first; totals', async () => {
    const body = await report('groupBy=asset');
    expect(body.currency).toBe('USD');
    expect(body.rows).toEqual([
      { key: truck, name: 'Truck 12', assetCount: 1, ...TRUCK },
      { key: dozer, name: 'Dozer 3', assetCount: 1, ...DOZER },
    ]);
    expect(body.totals).toEqual({
      fuel: 344.29,
      parts: 200,
      labor: 150.5,
      repairs: 125.75,
      expenses: 1250.1,
      depreciation: 6405.48,
      total: 8476.12,
      fuelVolumeLiters: 311.27,
      assetCount: 2,
    });
  });

  it('pages by total with a cursor while the totals stay those of the whole report', async () => {
    const first = await report('limit=1');
    expect(first.rows.map((r: { key: string }) => r.key)).toEqual([truck]);
    expect(first.totals.total).toBe(8476.12);
    const second = await report(`limit=1&cursor=${first.nextCursor}`);
    expect(second.rows.map((r: { key: string }) => r.key)).toEqual([dozer]);
    expect(second.nextCursor).toBeNull();
    expect((await get(`reports/costs?from=${FROM}&to=${TO}&cursor=bad`)).statusCode).toBe(422);
  });

  it('by project: tagged fills, expenses, lines and repairs (through the work order); the rest under no project', async () => {
    const body = await report('groupBy=project');
    expect(body.rows.map((r: Record<string, unknown>) => [r.key, r.name, r.assetCount, r.total])).toEqual([
      [null, '(no project)', 2, 6794.02],
      [quarry, 'Quarry', 2, 1636.6],
      [bridge, 'Bridge', 1, 45.5],
    ]);
    expect(body.rows[1]).toMatchObject({ fuel: 36, parts: 200, labor: 150.5, expenses: 1250.1, repairs: 0 });
    expect(body.totals.total).toBe(8476.12);
  });

  it('by yard and by asset class', async () => {
    const yards = await report('groupBy=yard');
    expect(yards.rows.map((r: Record<string, unknown>) => [r.key, r.name, r.total, r.meterDelta, r.meterUnit])).toEqual(
      [
        [null, '(no yard)', 8334.82, 600, 'mi'],
        [northYard, 'North', 141.3, 18, 'hrs'],
      ],
    );
    const classes = await report('groupBy=assetClass');
    expect(classes.rows.map((r: Record<string, unknown>) => [r.key, r.total, r.fuelEconomy])).toEqual([
      ['on-road', 8334.82, { kmPerLiter: 4.82, mpgUs: 11.34 }],
      ['off-road', 141.3, { litersPerHour: 3 }],
    ]);
  });

  it('streams the CSV with a header of the JSON field names', async () => {
    const res = await get(`reports/costs?from=${FROM}&to=${TO}&format=csv`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/csv');
    const lines = res.body.trim().split('\r\n');
    expect(lines[0]).toBe(
      'key,name,assetCount,fuel,parts,labor,repairs,expenses,depreciation,total,meterStart,meterEnd,meterDelta,' +
        'meterUnit,costPerMeterUnit,fuelVolumeLiters,fuelEconomy.litersPerHour,fuelEconomy.kmPerLiter,fuelEconomy.mpgUs',
    );
    expect(lines.slice(1)).toEqual([
      `${truck},Truck 12,1,202.99,200,150.5,125.75,1250.1,6405.48,8334.82,10000,10600,600,mi,13.89,217.27,,4.82,11.34`,
      `${dozer},Dozer 3,1,141.3,0,0,0,0,0,141.3,100,118,18,hrs,7.85,94,3,,`,
    ]);
  });

  it('needs from and to, a known groupBy, and at most ten years (422)', async () => {
    expect((await get(`reports/costs?from=${FROM}`)).statusCode).toBe(422);
    expect((await get(`reports/costs?from=${FROM}&to=${TO}&groupBy=driver`)).statusCode).toBe(422);
    expect((await get(`reports/costs?from=2000-01-01&to=2026-01-01`)).statusCode).toBe(422);
  });

  it("never shows another organisation's costs", async () => {
    const body = (await t.api.get(`/api/v1/reports/costs?from=${FROM}&to=${TO}`, other.key)).json();
    expect(body.rows).toEqual([]);
    expect(body.totals.total).toBe(0);
  });
});

describe('GET /assets/:id/depreciation', () => {
  it('answers the straight-line schedule and a book value between this year opening and closing', async () => {
    const body = (await get(`assets/${truck}/depreciation`)).json();
    expect(body).toMatchObject({
      method: 'STRAIGHT_LINE',
      purchaseCost: 36500,
      purchaseDate: '2025-01-01T00:00:00.000Z',
      usefulLifeYears: 5,
      salvageValue: 1500,
      currency: 'USD',
    });
    expect(body.schedule.map((y: Record<string, number>) => [y.year, y.opening, y.depreciation, y.closing])).toEqual([
      [1, 36500, 7000, 29500],
      [2, 29500, 7000, 22500],
      [3, 22500, 7000, 15500],
      [4, 15500, 7000, 8500],
      [5, 8500, 7000, 1500],
    ]);
    expect(body.schedule[4]).toMatchObject({ start: '2029-01-01T00:00:00.000Z', end: '2030-01-01T00:00:00.000Z' });
    expect(body.bookValue).toBeLessThan(29500);
    expect(body.bookValue).toBeGreaterThan(22500);
  });

  it('answers method NONE without a purchase cost, date or life', async () => {
    const body = (await get(`assets/${dozer}/depreciation`)).json();
    expect(body).toMatchObject({ method: 'NONE', schedule: [], bookValue: null, salvageValue: 0 });
  });
});

securitySuite('costs', () => ({ t, tenant: acme }), [
  {
    label: 'GET /assets/:id/costs',
    method: 'GET',
    path: () => `/api/v1/assets/${foreignAsset}/costs`,
    scope: 'reports:read',
    crossTenant: true,
  },
  {
    label: 'GET /assets/:id/depreciation',
    method: 'GET',
    path: () => `/api/v1/assets/${foreignAsset}/depreciation`,
    scope: 'reports:read',
    crossTenant: true,
  },
  {
    label: 'GET /reports/costs',
    method: 'GET',
    path: () => `/api/v1/reports/costs?from=${FROM}&to=${TO}`,
    scope: 'reports:read',
  },
]);
