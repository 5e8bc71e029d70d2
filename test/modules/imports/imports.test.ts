import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { importAndCommit, importOf, startImport } from '../../helpers/app/imports.ts';

let t: TestApp;
let acme: TestTenant;

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
});
afterAll(() => t.close());

const events = async (type: string) =>
  (await t.db.prisma.event.findMany({ where: { orgId: acme.orgId, type }, orderBy: { createdAt: 'asc' } })).map(
    (e) => e.data as Record<string, unknown>,
  );

describe('assets import', () => {
  const csv = [
    'Customer Asset Number,Nickname,Asset Class,Purchase Cost,License Plate',
    'A-1,Loader 1,off-road,"12,500.50",AB-1',
    'A-2,Truck 2,on-road,9000,',
    '',
    'A-3,,off-road,,',
  ].join('\r\n');

  it('validates without writing, shows rows and errors, refuses the commit under reject_all', async () => {
    const res = await startImport(t, acme.key, 'assets', csv);
    expect(res.statusCode).toBe(202);
    const id = res.json().importId;
    const imp = await importOf(t, acme.key, id);
    expect(imp).toMatchObject({
      status: 'validated',
      counts: { rows: 3, create: 2, update: 0, unchanged: 0, error: 1 },
      progress: { rowsDone: 3, rowsTotal: 3 },
    });
    expect(await t.db.prisma.asset.count({ where: { orgId: acme.orgId } })).toBe(0);
    const errors = (await t.api.get(`/api/v1/imports/${id}/errors`, acme.key)).json();
    expect(errors.errors).toEqual([expect.objectContaining({ row: 5, column: 'Nickname', code: 'missing_value' })]);
    const rows = (await t.api.get(`/api/v1/imports/${id}/rows`, acme.key)).json();
    expect(rows.rows.map((r: { action: string }) => r.action)).toEqual(['create', 'create', 'error']);
    const csvRes = await t.api.get(`/api/v1/imports/${id}/errors?format=csv`, acme.key);
    expect(csvRes.headers['content-type']).toMatch(/text\/csv/);
    expect(csvRes.body.split('\r\n')[0]).toBe(
      'Customer Asset Number,Nickname,Asset Class,Purchase Cost,License Plate,error',
    );
    expect(csvRes.body.split('\r\n')[1]).toMatch(/^A-3,,off-road,,,"?row 5: missing_value/);
    const commit = await t.api.post(`/api/v1/imports/${id}/commit`, acme.key);
    expect(commit.statusCode).toBe(409);
    expect(commit.json().error).toBe('import_has_errors');
  });

  it('commits with skip_rows, emits events, then a re-import is all unchanged, and rolls back', async () => {
    const done = await importAndCommit(t, acme.key, 'assets', csv, { options: { onError: 'skip_rows' } });
    expect(done.commit.statusCode).toBe(202);
    expect(done.import).toMatchObject({ status: 'partially_completed', counts: { create: 2, error: 1 } });
    const assets = await t.db.prisma.asset.findMany({ where: { orgId: acme.orgId }, orderBy: { nickname: 'asc' } });
    expect(assets.map((a) => [a.nickname, a.purchaseCost, a.licensePlate])).toEqual([
      ['Loader 1', 12500.5, 'AB-1'],
      ['Truck 2', 9000, null],
    ]);
    expect((await events('import.completed')).at(-1)).toMatchObject({
      importId: done.id,
      status: 'partially_completed',
    });
    expect((await events('asset.created')).length).toBe(2);

    const again = await startImport(t, acme.key, 'assets', csv.replace('A-3,,off-road,,', ''));
    const second = await importOf(t, acme.key, again.json().importId);
    expect(second.counts).toMatchObject({ rows: 2, unchanged: 2, create: 0 });

    const rollback = await t.api.post(`/api/v1/imports/${done.id}/rollback`, acme.key);
    expect(rollback.statusCode).toBe(200);
    expect(await t.db.prisma.asset.count({ where: { orgId: acme.orgId } })).toBe(0);
    expect((await importOf(t, acme.key, done.id)).status).toBe('rolled_back');
  });
});

describe('meter readings import', () => {
  it('writes readings through the hours path with source import and rolls back', async () => {
    await importAndCommit(
      t,
      acme.key,
      'assets',
      'customerAssetNumber,nickname,assetClass,pmInterval\nM-1,Dozer,off-road,250\n',
    );
    const csv = 'customerAssetNumber;loggedAt;hoursReading\nM-1;01/02/2026 08:00;100,5\nM-1;11/02/2026 08:00;260\n';
    const done = await importAndCommit(t, acme.key, 'meter_readings', csv, {
      options: { decimal: ',', dateFormat: 'dd/mm/yyyy', timezone: 'Europe/Paris' },
    });
    expect(done.import).toMatchObject({ status: 'completed', counts: { create: 2, error: 0 } });
    const logs = await t.db.prisma.meterLog.findMany({ where: { orgId: acme.orgId }, orderBy: { loggedAt: 'asc' } });
    expect(logs.map((l) => [l.hoursReading, l.source, l.loggedAt.toISOString()])).toEqual([
      [100.5, 'import', '2026-02-01T07:00:00.000Z'],
      [260, 'import', '2026-02-11T07:00:00.000Z'],
    ]);
    expect(logs[1]!.autoFlagId).not.toBeNull();
    const again = await startImport(t, acme.key, 'meter_readings', csv, {
      options: { decimal: ',', dateFormat: 'dd/mm/yyyy', timezone: 'Europe/Paris' },
    });
    expect((await importOf(t, acme.key, again.json().importId)).counts).toMatchObject({ unchanged: 2 });
    const rollback = await t.api.post(`/api/v1/imports/${done.id}/rollback`, acme.key);
    expect(rollback.statusCode).toBe(200);
    expect(await t.db.prisma.meterLog.count({ where: { orgId: acme.orgId } })).toBe(0);
  });
});

describe('rules', () => {
  const errorsOf = async (id: string) => (await t.api.get(`/api/v1/imports/${id}/errors`, acme.key)).json().errors;

  it('a key twice in one file: the second row is an error, never a second create', async () => {
    const csv = 'customerAssetNumber,nickname,assetClass\nD-1,First,trailer\nd-1,Second,trailer\n';
    const id = (await startImport(t, acme.key, 'assets', csv)).json().importId;
    expect((await importOf(t, acme.key, id)).counts).toMatchObject({ create: 1, error: 1 });
    expect(await errorsOf(id)).toEqual([
      expect.objectContaining({ row: 3, code: 'duplicate_in_file', message: expect.stringMatching(/row 2/) }),
    ]);
  });

  it('trailing delimiters are empty cells; extra non-empty cells are refused', async () => {
    const csv = 'customerAssetNumber;nickname;assetClass;\nT-1;Trail;trailer;\nT-2;Extra;trailer;;surprise\n';
    const id = (await startImport(t, acme.key, 'assets', csv)).json().importId;
    expect(await errorsOf(id)).toEqual([expect.objectContaining({ row: 3, code: 'too_many_columns' })]);
  });

  it('a 1900-01-01 or 31/02 date is refused with its column, never rolled over', async () => {
    const csv =
      'customerAssetNumber,nickname,assetClass,purchaseDate\nE-1,Old,trailer,01/01/1900\nE-2,Feb,trailer,31/02/2026\n';
    const id = (await startImport(t, acme.key, 'assets', csv, { options: { dateFormat: 'dd/mm/yyyy' } })).json()
      .importId;
    expect(await errorsOf(id)).toEqual([
      expect.objectContaining({ row: 2, column: 'purchaseDate', code: 'date_out_of_range', value: '01/01/1900' }),
      expect.objectContaining({ row: 3, column: 'purchaseDate', code: 'invalid_date', value: '31/02/2026' }),
    ]);
  });

  it('European and American files read the same numbers; a misdeclared one is refused, not misread', async () => {
    const eu = 'customerAssetNumber;nickname;assetClass;purchaseCost\nN-1;Euro;trailer;1.234,56\n';
    const us = 'customerAssetNumber,nickname,assetClass,purchaseCost\nN-1,Euro,trailer,"1,234.56"\n';
    const euId = (await startImport(t, acme.key, 'assets', eu, { options: { decimal: ',' } })).json().importId;
    const usId = (await startImport(t, acme.key, 'assets', us)).json().importId;
    const valuesOf = async (id: string) =>
      (await t.api.get(`/api/v1/imports/${id}/rows`, acme.key)).json().rows[0].values;
    expect((await valuesOf(euId)).purchaseCost).toBe(1234.56);
    expect((await valuesOf(usId)).purchaseCost).toBe(1234.56);
    const wrong = (await startImport(t, acme.key, 'assets', eu)).json().importId;
    expect(await errorsOf(wrong)).toEqual([expect.objectContaining({ code: 'invalid_number', value: '1.234,56' })]);
  });
});

describe('meter reading rules', () => {
  it('refuses a lower reading without a note, an older one than stored, a conflicting one; keeps time order', async () => {
    await importAndCommit(t, acme.key, 'assets', 'customerAssetNumber,nickname,assetClass\nR-1,Roller,off-road\n');
    const first = await importAndCommit(
      t,
      acme.key,
      'meter_readings',
      'customerAssetNumber,loggedAt,hoursReading\nR-1,2026-03-10T08:00:00Z,500\n',
    );
    expect(first.import.status).toBe('completed');
    const csv = [
      'customerAssetNumber,loggedAt,hoursReading,note',
      'R-1,2026-03-12T08:00:00Z,520,',
      'R-1,2026-03-11T08:00:00Z,510,', // earlier in time than the row above: written first
      'R-1,2026-03-13T08:00:00Z,515,', // lower than 520 without a note
      'R-1,2026-03-14T08:00:00Z,516,gauge replaced', // lower than 520, with a note: accepted
      'R-1,2026-03-01T08:00:00Z,490,', // older than the stored 2026-03-10 reading
      'R-1,2026-03-10T08:00:00Z,501,', // another value at the stored reading's time
      'R-1,2026-03-10T08:00:00Z,500,', // the stored reading again
    ].join('\n');
    const id = (await startImport(t, acme.key, 'meter_readings', csv)).json().importId;
    const errors = (await t.api.get(`/api/v1/imports/${id}/errors`, acme.key)).json().errors;
    expect(errors.map((e: { row: number; code: string }) => [e.row, e.code])).toEqual([
      [4, 'reading_decreases'],
      [6, 'reading_out_of_order'],
      [7, 'conflicting_reading'],
    ]);
    expect((await importOf(t, acme.key, id)).counts).toMatchObject({ create: 3, unchanged: 1, error: 3 });
  });
});
