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

const assetBy = (customerAssetNumber: string) =>
  t.db.prisma.asset.findFirstOrThrow({ where: { orgId: acme.orgId, customerAssetNumber } });
const cardsOf = async (id: string) =>
  (await t.api.get(`/api/v1/assets/${id}`, acme.key)).json().asset.fuelCardNumbers as string[];
const eventsOf = async (type: string, assetId: string) =>
  (await t.db.prisma.event.findMany({ where: { orgId: acme.orgId, type } }))
    .map((e) => e.data as Record<string, unknown>)
    .filter((d) => d.assetId === assetId);
const rowsOf = async (id: string) =>
  (await t.api.get(`/api/v1/imports/${id}/rows`, acme.key)).json().rows as {
    action: string;
    errorCode: string | null;
    values: Record<string, unknown>;
  }[];
const errorsOf = async (id: string) => (await t.api.get(`/api/v1/imports/${id}/errors`, acme.key)).json().errors;
const clear = { options: { clearValue: '#clear' } };

describe('clearing a field with options.clearValue', () => {
  it('clears a nullable field (an update in the dry run), and rollback restores it', async () => {
    await importAndCommit(
      t,
      acme.key,
      'assets',
      'customerAssetNumber,nickname,assetClass,licensePlate,vin\nCL-1,Loader,off-road,AB-1,VIN-1\n',
    );
    const asset = await assetBy('CL-1');
    // An empty cell leaves the field; the marker (trimmed, any case) clears it.
    const csv = 'customerAssetNumber,licensePlate,vin\nCL-1, #CLEAR ,\n';
    const id = (await startImport(t, acme.key, 'assets', csv, clear)).json().importId;
    expect((await importOf(t, acme.key, id)).counts).toMatchObject({ update: 1, error: 0 });
    expect((await rowsOf(id))[0]).toMatchObject({ action: 'update', values: { licensePlate: null } });
    expect((await t.api.post(`/api/v1/imports/${id}/commit`, acme.key)).statusCode).toBe(202);
    expect((await importOf(t, acme.key, id)).status).toBe('completed');
    expect(await assetBy('CL-1')).toMatchObject({ licensePlate: null, vin: 'VIN-1' });
    expect((await eventsOf('asset.updated', asset.id)).at(-1)).toMatchObject({ changedFields: ['licensePlate'] });
    // Cleared again: nothing left to change.
    const again = (await startImport(t, acme.key, 'assets', csv, clear)).json().importId;
    expect((await importOf(t, acme.key, again)).counts).toMatchObject({ unchanged: 1 });
    expect((await t.api.post(`/api/v1/imports/${id}/rollback`, acme.key)).statusCode).toBe(200);
    expect((await assetBy('CL-1')).licensePlate).toBe('AB-1');
  });

  it('refuses the marker on a field that always has a value or is not updatable; without the option it is text', async () => {
    const csv = [
      'customerAssetNumber,nickname,assetClass,depreciationMethod',
      'CL-1,#clear,,',
      'CL-1b,Truck,#clear,',
      'CL-1c,Truck,on-road,#clear',
      '#clear,Truck,on-road,',
    ].join('\n');
    const id = (await startImport(t, acme.key, 'assets', csv, clear)).json().importId;
    expect(
      (await errorsOf(id)).map((e: { row: number; column: string; code: string }) => [e.row, e.column, e.code]),
    ).toEqual([
      [2, 'nickname', 'not_clearable'],
      [3, 'assetClass', 'not_clearable'],
      [4, 'depreciationMethod', 'not_clearable'],
      [5, 'customerAssetNumber', 'missing_value'],
    ]);
    const plain = (await startImport(t, acme.key, 'assets', 'customerAssetNumber,licensePlate\nCL-1,#clear\n')).json()
      .importId;
    expect((await rowsOf(plain))[0]).toMatchObject({ action: 'update', values: { licensePlate: '#clear' } });
  });

  it('clears fields of vendors, tools and parts the same way', async () => {
    await t.api.post('/api/v1/vendors', acme.key, { name: 'Clear Parts', phone: '555', email: 'a@clear.example' });
    await t.api.post('/api/v1/tools', acme.key, { name: 'Clear Drill', serial: 'CD-1', category: 'power' });
    await t.api.post('/api/v1/parts', acme.key, { number: 'CP-1', name: 'Clear filter', description: 'old' });
    const vendors = await importAndCommit(t, acme.key, 'vendors', 'name,phone\nclear parts,#clear\n', clear);
    // The tool is found by name once its serial cell is the marker, and its serial is cleared.
    const tools = await importAndCommit(
      t,
      acme.key,
      'tools',
      'name,serial,category\nClear Drill,#clear,#clear\n',
      clear,
    );
    const parts = await importAndCommit(t, acme.key, 'parts', 'number,description,name\nCP-1,#clear,#clear\n', clear);
    expect([vendors.import.counts, tools.import.counts]).toMatchObject([{ update: 1 }, { update: 1 }]);
    expect(parts.commit.json().error).toBe('import_has_errors');
    expect(await errorsOf(parts.id)).toEqual([expect.objectContaining({ column: 'name', code: 'not_clearable' })]);
    const vendor = await t.db.prisma.vendor.findFirstOrThrow({ where: { orgId: acme.orgId, name: 'Clear Parts' } });
    const tool = await t.db.prisma.tool.findFirstOrThrow({ where: { orgId: acme.orgId, name: 'Clear Drill' } });
    expect([vendor.phone, vendor.email, tool.serial, tool.category]).toEqual([null, 'a@clear.example', null, null]);
    const part = await importAndCommit(t, acme.key, 'parts', 'number,description\nCP-1,#clear\n', clear);
    expect(part.import).toMatchObject({ status: 'completed', counts: { update: 1 } });
    expect(
      (await t.db.prisma.part.findFirstOrThrow({ where: { orgId: acme.orgId, number: 'CP-1' } })).description,
    ).toBe(null);
    for (const done of [vendors, tools, part])
      expect((await t.api.post(`/api/v1/imports/${done.id}/rollback`, acme.key)).statusCode).toBe(200);
    expect((await t.db.prisma.vendor.findUniqueOrThrow({ where: { id: vendor.id } })).phone).toBe('555');
    expect(await t.db.prisma.tool.findUniqueOrThrow({ where: { id: tool.id } })).toMatchObject({
      serial: 'CD-1',
      category: 'power',
    });
    expect(
      (await t.db.prisma.part.findFirstOrThrow({ where: { orgId: acme.orgId, number: 'CP-1' } })).description,
    ).toBe('old');
  });

  it("refuses clearing a fuel entry's recorded reading, as PATCH does", async () => {
    await t.api.post('/api/v1/assets', acme.key, {
      nickname: 'Fuel truck',
      assetClass: 'on-road',
      customerAssetNumber: 'FR-1',
    });
    const fill = 'externalId,customerAssetNumber,fueledAt,volume,unit,totalCost,meterReading,note\n';
    const done = await importAndCommit(
      t,
      acme.key,
      'fuel_entries',
      `${fill}FR-T1,FR-1,2026-11-03,50,L,80,1200,first\n`,
    );
    expect(done.import.status).toBe('completed');
    const id = (
      await startImport(t, acme.key, 'fuel_entries', `${fill}FR-T1,FR-1,2026-11-03,50,L,80,#clear,#clear\n`, clear)
    ).json().importId;
    expect(await errorsOf(id)).toEqual([expect.objectContaining({ code: 'not_updatable' })]);
    const note = (
      await startImport(t, acme.key, 'fuel_entries', `${fill}FR-T1,FR-1,2026-11-03,50,L,80,,#clear\n`, clear)
    ).json().importId;
    expect((await rowsOf(note))[0]).toMatchObject({ action: 'update', values: { note: null } });
  });

  it('is refused on types whose rows only create', async () => {
    const id = (
      await startImport(
        t,
        acme.key,
        'meter_readings',
        'customerAssetNumber,loggedAt,hoursReading,note\nCL-1,2026-01-01,5,#clear\n',
        clear,
      )
    ).json().importId;
    expect(await errorsOf(id)).toEqual([expect.objectContaining({ column: 'note', code: 'not_clearable' })]);
  });
});

describe('fuelCardNumbers', () => {
  it('sets cards (a list in a cell), refuses a card another asset holds or an earlier row gives, rolls back', async () => {
    const holder = (
      await t.api.post('/api/v1/assets', acme.key, {
        nickname: 'Holder',
        assetClass: 'on-road',
        customerAssetNumber: 'FC-0',
      })
    ).json().assetId;
    await t.api.patch(`/api/v1/assets/${holder}`, acme.key, { fuelCardNumbers: ['9000'] });
    const csv = [
      'customerAssetNumber;nickname;assetClass;fuelCardNumbers',
      'FC-1;Tanker;on-road;7001|7002',
      'FC-2;Van;on-road;"7003, 7001"',
      'FC-3;Pickup;on-road;9000',
      'FC-4;Truck;on-road;7004|7004',
    ].join('\n');
    const id = (await startImport(t, acme.key, 'assets', csv, { options: { onError: 'skip_rows' } })).json().importId;
    expect((await importOf(t, acme.key, id)).counts).toMatchObject({ create: 2, error: 2 });
    expect(await errorsOf(id)).toEqual([
      expect.objectContaining({ row: 3, column: 'fuelCardNumbers', code: 'fuel_card_taken', value: '7001' }),
      expect.objectContaining({ row: 4, column: 'fuelCardNumbers', code: 'fuel_card_taken', value: '9000' }),
    ]);
    expect((await t.api.post(`/api/v1/imports/${id}/commit`, acme.key)).statusCode).toBe(202);
    expect((await importOf(t, acme.key, id)).status).toBe('partially_completed');
    const tanker = await assetBy('FC-1');
    expect(await cardsOf(tanker.id)).toEqual(['7001', '7002']);
    expect(await cardsOf((await assetBy('FC-4')).id)).toEqual(['7004']);

    // The fuel-card statement then finds the asset by its card.
    const fills = await importAndCommit(
      t,
      acme.key,
      'fuel_entries',
      'externalId,cardNumber,fueledAt,volume,unit,totalCost\nFC-T1,7002,2026-11-03,50,L,80\n',
    );
    expect(fills.import).toMatchObject({ status: 'completed', counts: { create: 1 } });
    expect(
      (await t.db.prisma.fuelEntry.findFirstOrThrow({ where: { orgId: acme.orgId, externalId: 'FC-T1' } })).assetId,
    ).toBe(tanker.id);

    // Replacing a list, clearing another; the same file again is unchanged; rollback puts the cards back.
    const change = 'customerAssetNumber,fuelCardNumbers\nFC-1,7002|7005\nFC-4,#clear\n';
    const changed = await importAndCommit(t, acme.key, 'assets', change, clear);
    expect(changed.import).toMatchObject({ status: 'completed', counts: { update: 2 } });
    expect(await cardsOf(tanker.id)).toEqual(['7002', '7005']);
    expect(await cardsOf((await assetBy('FC-4')).id)).toEqual([]);
    const same = (await startImport(t, acme.key, 'assets', change, clear)).json().importId;
    expect((await importOf(t, acme.key, same)).counts).toMatchObject({ unchanged: 2 });
    expect((await t.api.post(`/api/v1/imports/${changed.id}/rollback`, acme.key)).statusCode).toBe(200);
    expect(await cardsOf(tanker.id)).toEqual(['7001', '7002']);
    expect(await cardsOf((await assetBy('FC-4')).id)).toEqual(['7004']);
  });

  it('reads a card with spaces inside whole, as PATCH stores it', async () => {
    const id = (
      await t.api.post('/api/v1/assets', acme.key, {
        nickname: 'Spaced',
        assetClass: 'on-road',
        customerAssetNumber: 'FC-S',
      })
    ).json().assetId;
    await t.api.patch(`/api/v1/assets/${id}`, acme.key, { fuelCardNumbers: ['7100 200'] });
    const same = await startImport(t, acme.key, 'assets', 'customerAssetNumber,fuelCardNumbers\nFC-S, 7100 200 \n');
    expect((await importOf(t, acme.key, same.json().importId)).counts).toMatchObject({ unchanged: 1, error: 0 });
  });

  it('a rollback refuses when the cards changed since; a card taken before commit fails it, writing nothing', async () => {
    const done = await importAndCommit(t, acme.key, 'assets', 'customerAssetNumber,fuelCardNumbers\nFC-1,7001|7006\n');
    expect(done.import.status).toBe('completed');
    const tanker = await assetBy('FC-1');
    await t.api.patch(`/api/v1/assets/${tanker.id}`, acme.key, { fuelCardNumbers: ['7001'] });
    const refused = await t.api.post(`/api/v1/imports/${done.id}/rollback`, acme.key);
    expect(refused.json()).toMatchObject({ error: 'import_rows_changed', rows: [2] });

    const id = (await startImport(t, acme.key, 'assets', 'customerAssetNumber,fuelCardNumbers\nFC-4,7007\n')).json()
      .importId;
    await t.api.patch(`/api/v1/assets/${tanker.id}`, acme.key, { fuelCardNumbers: ['7001', '7007'] });
    expect((await t.api.post(`/api/v1/imports/${id}/commit`, acme.key)).statusCode).toBe(202);
    const imp = await importOf(t, acme.key, id);
    expect(imp).toMatchObject({ status: 'failed' });
    expect(imp.failureReason).toMatch(/row 2 was to be update and would now be error \(fuel card 7007/);
    expect(await cardsOf((await assetBy('FC-4')).id)).toEqual(['7004']);
  });
});

describe('the commit in batches', () => {
  it('writes several batches as POST then PATCH would: one asset.created each, asset.updated for PATCH fields', async () => {
    const lines = ['customerAssetNumber,nickname,assetClass,purchaseCost,lifecycleStatus,yardId'];
    const yard = (await t.api.post('/api/v1/yards', acme.key, { name: 'Batch Yard' })).json().yardId;
    for (let i = 1; i <= 250; i++)
      lines.push(`BT-${i},Machine ${i},off-road,${i % 2 ? '' : '1000.5'},${i === 7 ? 'SOLD' : ''},${yard}`);
    const done = await importAndCommit(t, acme.key, 'assets', lines.join('\n'));
    expect(done.import).toMatchObject({ status: 'completed', counts: { create: 250 } });
    const assets = await t.db.prisma.asset.findMany({
      where: { orgId: acme.orgId, customerAssetNumber: { startsWith: 'BT-' } },
    });
    expect(assets).toHaveLength(250);
    expect(assets.every((a) => a.yardId === yard && a.meterType === 'HOURS')).toBe(true);
    const sold = assets.find((a) => a.customerAssetNumber === 'BT-7')!;
    expect(sold.lifecycleStatus).toBe('SOLD');
    expect(sold.soldAt).not.toBeNull();
    // One UPDATE patches rows with different columns: each row keeps what its own patch left alone.
    expect(sold.purchaseCost).toBeNull();
    const costed = assets.find((a) => a.customerAssetNumber === 'BT-8')!;
    expect([costed.lifecycleStatus, Number(costed.purchaseCost), costed.soldAt]).toEqual(['IN_SERVICE', 1000.5, null]);
    const ids = new Set(assets.map((a) => a.id));
    const events = await t.db.prisma.event.findMany({
      where: { orgId: acme.orgId, type: { in: ['asset.created', 'asset.updated'] } },
    });
    const mine = events.filter((e) => ids.has((e.data as { assetId: string }).assetId));
    expect(mine.filter((e) => e.type === 'asset.created')).toHaveLength(250);
    const updated = mine.filter((e) => e.type === 'asset.updated').map((e) => e.data as Record<string, unknown>);
    expect(updated).toHaveLength(126);
    expect(updated.find((d) => d.assetId === sold.id)).toMatchObject({
      changedFields: ['lifecycleStatus', 'soldAt'],
      lifecycleStatus: 'SOLD',
    });
    const created = mine.find((e) => e.type === 'asset.created' && (e.data as { assetId: string }).assetId === sold.id);
    expect(created!.data).toMatchObject({ lifecycleStatus: 'IN_SERVICE', assetClass: 'off-road' });
    expect((await t.api.post(`/api/v1/imports/${done.id}/rollback`, acme.key)).statusCode).toBe(200);
    expect(
      await t.db.prisma.asset.count({ where: { orgId: acme.orgId, customerAssetNumber: { startsWith: 'BT-' } } }),
    ).toBe(0);
  });

  it('updates restore every field they changed on rollback, the date of a sale included', async () => {
    await importAndCommit(t, acme.key, 'assets', 'customerAssetNumber,nickname,assetClass\nSO-1,Sold one,trailer\n');
    const before = await assetBy('SO-1');
    const done = await importAndCommit(
      t,
      acme.key,
      'assets',
      'customerAssetNumber,lifecycleStatus,soldTo\nSO-1,SOLD,Buyer\n',
    );
    expect(done.import).toMatchObject({ status: 'completed', counts: { update: 1 } });
    expect(await assetBy('SO-1')).toMatchObject({ lifecycleStatus: 'SOLD', soldTo: 'Buyer' });
    expect((await t.api.post(`/api/v1/imports/${done.id}/rollback`, acme.key)).statusCode).toBe(200);
    expect(await assetBy('SO-1')).toMatchObject({
      lifecycleStatus: before.lifecycleStatus,
      soldTo: null,
      soldAt: null,
    });
  });

  it('refuses attaching an asset to itself, as PATCH does', async () => {
    const self = await assetBy('SO-1');
    const id = (await startImport(t, acme.key, 'assets', `customerAssetNumber,parentAssetId\nSO-1,${self.id}\n`)).json()
      .importId;
    expect(await errorsOf(id)).toEqual([expect.objectContaining({ column: 'parentAssetId', code: 'invalid_value' })]);
  });
});
