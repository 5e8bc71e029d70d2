import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { makeYard } from '../../helpers/app/factories.ts';
import { transaction } from '../../../src/db/transaction.ts';
import { dec } from '../../../src/core/money.ts';
import { receiveStock, takeStock } from '../../../src/modules/parts/part-ledger.operations.ts';

let t: TestApp;
let acme: TestTenant;
let yardId: string;
beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant();
  yardId = await makeYard(t, acme.key);
});
afterAll(() => t.close());

async function newPart(number: string, trackInventory = true) {
  const part = await t.db.prisma.part.create({ data: { orgId: acme.orgId, number, name: number, trackInventory } });
  return part.id;
}

const receive = (partId: string, quantity: string, unitCost: string) =>
  transaction(t.db, (tx) =>
    receiveStock(tx, {
      orgId: acme.orgId,
      partId,
      yardId,
      quantity: dec(quantity),
      unitCost: dec(unitCost),
      source: { type: 'purchase_order', id: 'po-1' },
      actor: acme.userId,
    }),
  );

const issue = (partId: string, quantity: string) =>
  transaction(t.db, (tx) =>
    takeStock(tx, {
      orgId: acme.orgId,
      partId,
      yardId,
      type: 'issue',
      quantity: dec(quantity),
      source: { type: 'work_order', id: 'wo-1' },
      actor: acme.userId,
    }),
  );

async function stockOf(partId: string) {
  const s = await t.db.prisma.partStock.findUniqueOrThrow({
    where: { orgId_partId_yardId: { orgId: acme.orgId, partId, yardId } },
  });
  return { onHand: s.onHand.toString(), value: s.value.toFixed(2) };
}

describe('receiveStock', () => {
  it('writes a receipt entry, a cost layer and the stock row', async () => {
    const partId = await newPart('R-1');
    const entry = await receive(partId, '10', '5.125');
    expect(entry).toMatchObject({ type: 'receipt', partId, yardId, source: { type: 'purchase_order', id: 'po-1' } });
    expect(entry!.quantity.toString()).toBe('10');
    expect(entry!.previousQuantity.toString()).toBe('0');
    expect(entry!.currentQuantity.toString()).toBe('10');
    expect(entry!.unitCost.toString()).toBe('5.125');
    expect(entry!.totalCost.toFixed(2)).toBe('51.25');
    expect(await stockOf(partId)).toEqual({ onHand: '10', value: '51.25' });
    const layers = await t.db.prisma.inventoryCostLayer.findMany({ where: { partId } });
    expect(layers.map((l) => [l.remaining.toString(), l.remainingValue.toFixed(2)])).toEqual([['10', '51.25']]);
  });

  it('writes nothing for a part that does not track inventory', async () => {
    const partId = await newPart('R-2', false);
    expect(await receive(partId, '3', '1')).toBeNull();
    expect(await t.db.prisma.inventoryLedgerEntry.count({ where: { partId } })).toBe(0);
  });

  it("refuses another organisation's part", async () => {
    const other = await t.tenant('Other');
    const part = await t.db.prisma.part.create({ data: { orgId: other.orgId, number: 'X', name: 'X' } });
    await expect(receive(part.id, '1', '1')).rejects.toMatchObject({ statusCode: 409 });
  });
});

describe('costing to the cent', () => {
  it('FIFO: 10 at 5.00 and 10 at 7.00, issue 15 costs 85.00 and leaves 35.00', async () => {
    const partId = await newPart('F-1');
    await receive(partId, '10', '5');
    await receive(partId, '10', '7');
    const { entry } = await issue(partId, '15');
    expect(entry.totalCost.toFixed(2)).toBe('85.00');
    expect(entry.unitCost.toString()).toBe('5.6667');
    expect(entry.quantity.toString()).toBe('-15');
    expect(await stockOf(partId)).toEqual({ onHand: '5', value: '35.00' });
  });

  it('AVERAGE: the same movements cost 90.00 and leave 30.00', async () => {
    await t.db.prisma.organization.update({ where: { id: acme.orgId }, data: { inventoryCostMethod: 'AVERAGE' } });
    try {
      const partId = await newPart('A-1');
      await receive(partId, '10', '5');
      await receive(partId, '10', '7');
      const { entry } = await issue(partId, '15');
      expect(entry.totalCost.toFixed(2)).toBe('90.00');
      expect(entry.unitCost.toString()).toBe('6');
      expect(await stockOf(partId)).toEqual({ onHand: '5', value: '30.00' });
    } finally {
      await t.db.prisma.organization.update({ where: { id: acme.orgId }, data: { inventoryCostMethod: 'FIFO' } });
    }
  });

  it('thirds add up: three issues of 1 from 3 at 10.00 total cost 3.33, 3.34 and 3.33', async () => {
    const partId = await newPart('T-1');
    await receive(partId, '3', '3.3333');
    const totals = [];
    for (let i = 0; i < 3; i++) totals.push((await issue(partId, '1')).entry.totalCost.toFixed(2));
    expect(totals.reduce((a, b) => a + Number(b) * 100, 0)).toBe(1000);
    expect(await stockOf(partId)).toEqual({ onHand: '0', value: '0.00' });
  });

  it('refuses to take more than the yard holds (409 insufficient_stock)', async () => {
    const partId = await newPart('I-1');
    await receive(partId, '2', '1');
    await expect(issue(partId, '3')).rejects.toMatchObject({ statusCode: 409, code: 'insufficient_stock' });
  });
});
