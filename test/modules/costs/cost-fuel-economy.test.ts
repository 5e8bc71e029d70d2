import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { expectCreated, makeAsset, makeHoursLog, makeProject } from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';

// The full-to-full rules at the edges of a period: fills before the first closing fill and after the last one, a
// rejected reading, a fill without a reading, and deleting a fill whose reading closes a segment.
const FROM = '2026-01-01T00:00:00.000Z';
const TO = '2026-12-01T00:00:00.000Z';

let t: TestApp;
let acme: TestTenant;
let excavator: string;
let quarry: string;
let closingFill: string;

const fill = async (fueledAt: string, volume: number, extra: Record<string, unknown> = {}) =>
  expectCreated(
    await t.api.post('/api/v1/fuel-entries', acme.key, {
      assetId: excavator,
      fueledAt,
      volume,
      unit: 'LITER',
      totalCost: volume,
      ...extra,
    }),
    `fill of ${fueledAt}`,
  );

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  quarry = await makeProject(t, acme.key, { name: 'Quarry' });
  excavator = await makeAsset(t, acme.key, { nickname: 'Excavator 9', meterType: 'HOURS', meterUnit: 'hrs' });
  await fill('2025-12-20T08:00:00Z', 10, { meterReading: 90 }); // before the period
  await fill('2026-01-05T08:00:00Z', 7); // no reading, before the first closing fill
  await fill('2026-01-06T08:00:00Z', 5, { meterReading: 98, partial: true }); // partial, before it too
  await fill('2026-01-10T08:00:00Z', 20, { meterReading: 100 }); // the first closing fill
  await fill('2026-01-15T08:00:00Z', 6); // no reading: carried into the next segment
  // Billed to a project the excavator was never checked out to: accepted, counted under that project.
  await fill('2026-01-20T08:00:00Z', 30, { meterReading: 110, projectId: quarry });
  // A lower reading with a note is held for review; rejected, it closes nothing and its volume is carried.
  const held = await fill('2026-01-25T08:00:00Z', 12, { meterReading: 105, note: 'pump meter' });
  const rejected = await t.api.patch(`/api/v1/hours/${held.logId}`, acme.key, { reviewStatus: 'REJECTED' });
  expect(rejected.statusCode, rejected.body).toBe(200);
  await makeHoursLog(t, acme.key, excavator, 120, {
    loggedAt: '2026-02-01T08:00:00Z',
    fuelVolume: 10,
    fuelUnit: 'LITER',
    fuelCostTotal: 10,
  });
  closingFill = (await fill('2026-02-10T08:00:00Z', 40, { meterReading: 130 })).fuelEntryId as string;
  await fill('2026-02-20T08:00:00Z', 16, { meterReading: 140 }); // the last closing fill
  await fill('2026-03-01T08:00:00Z', 9, { meterReading: 145, partial: true }); // a trailing partial waits
  await fill('2026-03-02T08:00:00Z', 4); // and so does a trailing fill without a reading
});
afterAll(() => t.close());

const costs = async () => {
  const res = await t.api.get(`/api/v1/assets/${excavator}/costs?from=${FROM}&to=${TO}`, acme.key);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};
const reportRow = async (groupBy: string, key: string) => {
  const res = await t.api.get(`/api/v1/reports/costs?from=${FROM}&to=${TO}&groupBy=${groupBy}`, acme.key);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().rows.find((r: { key: string }) => r.key === key);
};

describe('fuel economy over a period', () => {
  it('counts the fills after the first closing fill up to the last one, nothing before or after', async () => {
    // Closing fills 100 → 140 hours; volume 6 + 30 + 12 + 10 + 40 + 16 = 114 L of the period's 159 L.
    const body = await costs();
    expect(body).toMatchObject({
      fuelVolumeLiters: 159,
      meterStart: 90,
      meterEnd: 145,
      meterDelta: 55,
      fuelEconomy: { litersPerHour: 2.85 },
    });
    const row = await reportRow('asset', excavator);
    expect(row).toMatchObject({ fuelVolumeLiters: 159, fuelEconomy: { litersPerHour: 2.85 }, meterDelta: 55 });
    expect(await reportRow('project', quarry)).toMatchObject({ assetCount: 1, fuel: 30, fuelEconomy: null });
  });

  it('a period starting after a closing fill starts from the next one', async () => {
    const res = await t.api.get(`/api/v1/assets/${excavator}/costs?from=2026-01-12&to=2026-02-15`, acme.key);
    // Closing fills 110 → 130 hours: 12 + 10 + 40 = 62 L.
    expect(res.json()).toMatchObject({ fuelEconomy: { litersPerHour: 3.1 } });
    const single = await t.api.get(`/api/v1/assets/${excavator}/costs?from=2026-02-15&to=2026-03-05`, acme.key);
    expect(single.json()).toMatchObject({ fuelVolumeLiters: 29, fuelEconomy: null });
  });

  it('deleting a fill whose reading closes a segment merges it into the next; the reading stays', async () => {
    const del = await t.api.delete(`/api/v1/fuel-entries/${closingFill}`, acme.key);
    expect(del.statusCode).toBe(200);
    // Its 40 L leave the report; 120 → 140 is one segment now: 6 + 30 + 12 + 10 + 16 = 74 L over 40 hours.
    expect(await costs()).toMatchObject({
      fuelVolumeLiters: 119,
      meterEnd: 145,
      meterDelta: 55,
      fuelEconomy: { litersPerHour: 1.85 },
    });
    expect(await reportRow('asset', excavator)).toMatchObject({ fuelEconomy: { litersPerHour: 1.85 } });
  });
});
