// Stock counts imported: `partNumber, yardId | yardName, countedQuantity, unitCost?`. A count that differs from
// the stock is written through the ledger as an adjustment with reason `count`; one equal to it is unchanged.
import { z } from 'zod';
import { transaction } from '../../db/transaction.ts';
import { dec } from '../../core/money.ts';
import { applyAdjustment } from '../parts/part-adjustment.operations.ts';
import { lockStock } from '../parts/part-ledger.operations.ts';
import { quantity } from '../parts/parts.schemas.ts';
import type { AdjustmentInput } from '../parts/part-inventory.schemas.ts';
import { unitCost } from '../../core/money.ts';
import type { FieldSpec, RowError } from './import-fields.rules.ts';
import { PredictionMismatch, type Decision, type ImportHandler, type Written } from './import-handler.operations.ts';
import { rowsChanged, zodRowError } from './import-assets.operations.ts';
import { resolveYards } from './import-parts.operations.ts';
import { markWritten, writtenRows } from './imports.repository.ts';

const FIELDS: FieldSpec[] = [
  { name: 'partNumber', kind: 'text' },
  { name: 'yardId', kind: 'text' },
  { name: 'yardName', kind: 'text' },
  { name: 'countedQuantity', kind: 'number' },
  { name: 'unitCost', kind: 'number' },
  { name: 'note', kind: 'text' },
];

const CountRow = z.object({
  countedQuantity: quantity(),
  unitCost: unitCost().optional(),
  note: z.string().max(1000).optional(),
});

const errorOf = (error: RowError): Decision => ({ action: 'error', targetId: null, key: null, error });
const countOf = (values: Record<string, unknown>, reason: 'count', note?: string) =>
  ({
    yardId: values.yardId,
    countedQuantity: values.countedQuantity,
    unitCost: values.unitCost,
    reason,
    note: note ?? (values.note as string | undefined) ?? 'stock count (import)',
  }) as AdjustmentInput;

export const stockCountImport: ImportHandler = {
  scope: 'parts:write',
  fields: FIELDS,
  required: () => [['partNumber'], ['yardId', 'yardName'], ['countedQuantity']],
  writeOrder: '"rowNumber"',

  async resolve(db, ctx, rows) {
    const yardErrors = await resolveYards(db, ctx.orgId, rows);
    const numbers = [
      ...new Set(rows.map((r) => r.values.partNumber).filter((v): v is string => typeof v === 'string')),
    ];
    const parts = await db.prisma.$queryRawUnsafe<{ id: string; key: string; trackInventory: boolean }[]>(
      `SELECT id, lower(number) AS key, "trackInventory" FROM parts WHERE "orgId" = $1 AND lower(number) = ANY($2::text[])`,
      ctx.orgId,
      numbers.map((n) => n.toLowerCase()),
    );
    const byNumber = new Map(parts.map((p) => [p.key, p]));
    const stock = await db.prisma.partStock.findMany({
      where: { orgId: ctx.orgId, partId: { in: parts.map((p) => p.id) } },
      select: { partId: true, yardId: true, onHand: true },
    });
    const onHand = new Map(stock.map((s) => [`${s.partId}|${s.yardId}`, dec(s.onHand)]));
    return rows.map((row): Decision => {
      const v = row.values;
      const yardError = yardErrors.get(row.rowNumber);
      if (yardError) return errorOf(yardError);
      if (typeof v.partNumber !== 'string')
        return errorOf({ code: 'missing_value', column: 'partNumber', value: null, message: 'partNumber is required' });
      if (typeof v.yardId !== 'string')
        return errorOf({
          code: 'missing_value',
          column: 'yardName',
          value: null,
          message: 'yardId or yardName is required',
        });
      const part = byNumber.get(v.partNumber.toLowerCase());
      if (!part)
        return errorOf({
          code: 'unknown_part',
          column: 'partNumber',
          value: v.partNumber,
          message: 'no part has this number',
        });
      if (!part.trackInventory)
        return errorOf({
          code: 'inventory_not_tracked',
          column: 'partNumber',
          value: v.partNumber,
          message: 'the part keeps no stock',
        });
      const parsed = CountRow.safeParse(v);
      if (!parsed.success) return errorOf(zodRowError(parsed.error, v));
      const key = `${part.id}|${v.yardId}`;
      const current = onHand.get(key) ?? dec(0);
      // The stock validation saw: the commit writes the predicted difference only if it is still the stock.
      v.expectedOnHand = current.toString();
      const same = current.eq(dec(parsed.data.countedQuantity));
      return { action: same ? 'unchanged' : 'update', targetId: part.id, key, error: null };
    });
  },

  async write({ db }, ctx, importId, rows) {
    await transaction(db, async (tx) => {
      const written: Written[] = [];
      for (const row of rows) {
        const v = row.values;
        const part = await tx.part.findFirst({ where: { id: row.targetId!, orgId: ctx.orgId } });
        if (!part) throw new PredictionMismatch(row.rowNumber, 'the part was deleted');
        const before = await lockStock(tx, {
          orgId: ctx.orgId,
          partId: part.id,
          yardId: v.yardId as string,
          type: 'adjustment',
          source: null,
          actor: ctx.actorId,
        });
        if (!before.onHand.eq(dec(v.expectedOnHand as string)))
          throw new PredictionMismatch(
            row.rowNumber,
            `the stock is ${before.onHand.toString()}, not ${String(v.expectedOnHand)}`,
          );
        const entry = await applyAdjustment(tx, ctx, part, countOf(v, 'count'));
        written.push({
          rowNumber: row.rowNumber,
          resultId: entry.id,
          prior: { yardId: v.yardId, onHand: before.onHand.toString(), counted: String(v.countedQuantity) },
          writtenUpdatedAt: null,
        });
      }
      await markWritten(tx, ctx.orgId, importId, written);
    });
  },

  async rollback(tx, ctx, importId) {
    const rows = await writtenRows(tx, ctx.orgId, importId);
    const changed: number[] = [];
    const todo = [];
    for (const row of rows) {
      const prior = row.prior as { yardId: string; onHand: string; counted: string };
      const part = await tx.part.findFirst({ where: { id: row.targetId!, orgId: ctx.orgId } });
      if (!part) {
        changed.push(row.rowNumber);
        continue;
      }
      const now = await lockStock(tx, {
        orgId: ctx.orgId,
        partId: part.id,
        yardId: prior.yardId,
        type: 'adjustment',
        source: null,
        actor: ctx.actorId,
      });
      if (!now.onHand.eq(dec(prior.counted))) changed.push(row.rowNumber);
      else todo.push({ part, prior });
    }
    if (changed.length > 0) throw rowsChanged(changed);
    for (const { part, prior } of todo)
      await applyAdjustment(
        tx,
        ctx,
        part,
        countOf(
          { yardId: prior.yardId, countedQuantity: Number(prior.onHand) },
          'count',
          `rollback of import ${importId}`,
        ),
      );
  },
};
