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

describe('vendors import', () => {
  it('creates by name, updates what differs, re-imports unchanged, rolls back both', async () => {
    await t.api.post('/api/v1/vendors', acme.key, { name: 'Acme Parts', phone: '1' });
    const csv = 'Name,Phone,Email\nacme parts,2,\nNew Vendor,3,sales@new.example\n';
    const done = await importAndCommit(t, acme.key, 'vendors', csv);
    expect(done.import).toMatchObject({ status: 'completed', counts: { create: 1, update: 1 } });
    const vendors = await t.db.prisma.vendor.findMany({ where: { orgId: acme.orgId }, orderBy: { name: 'asc' } });
    expect(vendors.map((v) => [v.name, v.phone])).toEqual([
      ['Acme Parts', '2'],
      ['New Vendor', '3'],
    ]);
    const again = (await startImport(t, acme.key, 'vendors', csv)).json().importId;
    expect((await importOf(t, acme.key, again)).counts).toMatchObject({ unchanged: 2 });
    expect((await t.api.post(`/api/v1/imports/${done.id}/rollback`, acme.key)).statusCode).toBe(200);
    const after = await t.db.prisma.vendor.findMany({ where: { orgId: acme.orgId } });
    expect(after.map((v) => [v.name, v.phone])).toEqual([['Acme Parts', '1']]);
  });

  it('needs purchasing:write', async () => {
    const { key } = await acme.newKey({ scopes: 'imports:write,imports:read' });
    expect((await startImport(t, key, 'vendors', 'name\nX\n')).json().error).toBe('missing_scope:purchasing:write');
  });
});

describe('tools import', () => {
  it('matches by serial, else by name; writes through the tools module', async () => {
    await t.api.post('/api/v1/tools', acme.key, { name: 'Drill', serial: 'SN-1' });
    await t.api.post('/api/v1/tools', acme.key, { name: 'Ladder' });
    const csv =
      'name,serial,category,isConsumable,stockLevel\nDrill 18V,sn-1,power,no,\nLadder,,access,,\nGloves,,ppe,yes,40\n';
    const done = await importAndCommit(t, acme.key, 'tools', csv);
    expect(done.import).toMatchObject({ status: 'completed', counts: { create: 1, update: 2 } });
    const tools = await t.db.prisma.tool.findMany({ where: { orgId: acme.orgId }, orderBy: { name: 'asc' } });
    expect(tools.map((x) => [x.name, x.serial, x.category, x.stockLevel])).toEqual([
      ['Drill 18V', 'SN-1', 'power', null],
      ['Gloves', null, 'ppe', 40],
      ['Ladder', null, 'access', null],
    ]);
    const created = await t.db.prisma.event.findMany({ where: { orgId: acme.orgId, type: 'tool.created' } });
    expect(created).toHaveLength(3);
    expect((await t.api.post(`/api/v1/imports/${done.id}/rollback`, acme.key)).statusCode).toBe(200);
    const after = await t.db.prisma.tool.findMany({ where: { orgId: acme.orgId }, orderBy: { name: 'asc' } });
    expect(after.map((x) => [x.name, x.category])).toEqual([
      ['Drill', null],
      ['Ladder', null],
    ]);
  });
});

describe('parts and stock counts imports', () => {
  it('creates parts with opening stock (reason initial), then counts them (reason count), and rolls back', async () => {
    const yard = (await t.api.post('/api/v1/yards', acme.key, { name: 'North Yard' })).json().yardId;
    const parts = await importAndCommit(
      t,
      acme.key,
      'parts',
      'number,name,unitCost,quantity,yardName\nOF-1,Oil filter,"1,250.5",10,north yard\nBF-2,Belt,3,,\n',
    );
    expect(parts.import).toMatchObject({ status: 'completed', counts: { create: 2 } });
    const ledger = await t.db.prisma.inventoryLedgerEntry.findMany({ where: { orgId: acme.orgId } });
    expect(ledger.map((e) => [e.reason, e.quantity.toString()])).toEqual([['initial', '10']]);
    const again = (await startImport(t, acme.key, 'parts', 'number,name\nof-1,Oil filter\n')).json().importId;
    expect((await importOf(t, acme.key, again)).counts).toMatchObject({ unchanged: 1 });

    const counts = await importAndCommit(
      t,
      acme.key,
      'stock_counts',
      `partNumber,yardId,countedQuantity\nOF-1,${yard},7\nBF-2,${yard},0\nXX-9,${yard},1\n`,
      { options: { onError: 'skip_rows' } },
    );
    expect(counts.import).toMatchObject({
      status: 'partially_completed',
      counts: { update: 1, unchanged: 1, error: 1 },
    });
    const stock = await t.db.prisma.partStock.findMany({ where: { orgId: acme.orgId } });
    expect(stock.map((s) => s.onHand.toString())).toEqual(['7']);
    const reasons = (
      await t.db.prisma.inventoryLedgerEntry.findMany({ where: { orgId: acme.orgId }, orderBy: { createdAt: 'asc' } })
    ).map((e) => e.reason);
    expect(reasons).toEqual(['initial', 'count']);

    expect((await t.api.post(`/api/v1/imports/${counts.id}/rollback`, acme.key)).statusCode).toBe(200);
    expect((await t.db.prisma.partStock.findMany({ where: { orgId: acme.orgId } }))[0]!.onHand.toString()).toBe('10');
    expect((await t.api.post(`/api/v1/imports/${parts.id}/rollback`, acme.key)).statusCode).toBe(200);
    expect(await t.db.prisma.part.count({ where: { orgId: acme.orgId } })).toBe(0);
  });
});

describe('fuel entries import', () => {
  it('reads a fuel-card statement through a saved mapping: cards first, unknown cards, products that are not fuel', async () => {
    const truck = (
      await t.api.post('/api/v1/assets', acme.key, {
        nickname: 'Tanker',
        assetClass: 'on-road',
        customerAssetNumber: 'F-1',
      })
    ).json().assetId;
    await t.api.patch(`/api/v1/assets/${truck}`, acme.key, { fuelCardNumbers: ['7001'] });
    const mapping = await t.api.post('/api/v1/imports/mappings', acme.key, {
      name: 'FleetCard statement',
      type: 'fuel_entries',
      mapping: {
        'Transaction ID': 'externalId',
        Card: 'cardNumber',
        Date: 'fueledAt',
        Litres: 'volume',
        Amount: 'totalCost',
        Product: 'product',
      },
      options: { decimal: ',', dateFormat: 'dd/mm/yyyy', fuelProducts: ['Diesel'], onError: 'skip_rows' },
    });
    const statement = [
      'Transaction ID;Card;Date;Litres;Amount;Product;Unit',
      'T-1;7001;03/11/2026;120,5;1.234,56;Diesel;L',
      'T-2;7001;04/11/2026;1;9,90;Car wash;',
      'T-3;9999;04/11/2026;50;80;Diesel;L',
    ].join('\n');
    const id = (
      await startImport(t, acme.key, 'fuel_entries', statement, { mappingId: mapping.json().mappingId })
    ).json().importId;
    const imp = await importOf(t, acme.key, id);
    expect(imp.counts).toMatchObject({ rows: 3, create: 1, unchanged: 1, error: 1 });
    const rows = (await t.api.get(`/api/v1/imports/${id}/rows`, acme.key)).json().rows;
    expect(rows.map((r: { action: string; errorCode: string | null }) => [r.action, r.errorCode])).toEqual([
      ['create', null],
      ['unchanged', 'not_fuel'],
      ['error', 'unknown_card'],
    ]);
    expect((await t.api.post(`/api/v1/imports/${id}/commit`, acme.key)).statusCode).toBe(202);
    expect((await importOf(t, acme.key, id)).status).toBe('partially_completed');
    const entries = await t.db.prisma.fuelEntry.findMany({ where: { orgId: acme.orgId } });
    expect(entries.map((e) => [e.assetId, e.externalId, e.volume.toString(), e.totalCost.toString(), e.unit])).toEqual([
      [truck, 'T-1', '120.5', '1234.56', 'LITER'],
    ]);
    const again = (
      await startImport(t, acme.key, 'fuel_entries', statement, { mappingId: mapping.json().mappingId })
    ).json().importId;
    expect((await importOf(t, acme.key, again)).counts).toMatchObject({ unchanged: 2, error: 1, create: 0 });
    expect((await t.api.post(`/api/v1/imports/${id}/rollback`, acme.key)).statusCode).toBe(200);
    expect(await t.db.prisma.fuelEntry.count({ where: { orgId: acme.orgId } })).toBe(0);
  });
});
