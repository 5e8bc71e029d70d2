// Parts imported: rows match parts by number (without case); a part the import creates may open its stock in a
// yard (quantity, yardId or yardName) through the ledger with reason `initial`.
import { z } from 'zod';
import type { Part } from '../../generated/prisma/client.ts';
import type { Database } from '../../db/database.ts';
import { notFound } from '../../core/errors.ts';
import { dec } from '../../core/money.ts';
import { sameValue } from '../assets/assets.operations.ts';
import { applyAdjustment } from '../parts/part-adjustment.operations.ts';
import { lockOwnedPart } from '../parts/parts.repository.ts';
import { CreatePartBody, quantity, UPDATABLE_PART_FIELDS, UpdatePartBody } from '../parts/parts.schemas.ts';
import type { AdjustmentInput } from '../parts/part-inventory.schemas.ts';
import type { FieldSpec, RowError } from './import-fields.rules.ts';
import type { PreparedRow } from './import-handler.operations.ts';
import { recordImport } from './import-records.operations.ts';

const DECIMALS = new Set(['unitCost', 'reorderPoint', 'reorderQuantity']);

const FIELDS: FieldSpec[] = [
  ...['number', 'name', 'description', 'manufacturer', 'manufacturerPartNumber', 'upc', 'category', 'unit'].map(
    (name) => ({ name, kind: 'text' as const }),
  ),
  { name: 'unitCost', kind: 'number' },
  { name: 'reorderPoint', kind: 'number' },
  { name: 'reorderQuantity', kind: 'number' },
  { name: 'trackInventory', kind: 'boolean' },
  { name: 'quantity', kind: 'number' },
  { name: 'yardId', kind: 'text' },
  { name: 'yardName', kind: 'text' },
];

const CreateImportedPart = CreatePartBody.extend({
  quantity: quantity().optional().describe('Opening stock of a created part, in yardId'),
  yardId: z.string().min(1).max(100).optional(),
});

/** Yards named by name become yardId (one query per batch); an unknown yard is the row's error. */
export async function resolveYards(db: Database, orgId: string, rows: PreparedRow[]): Promise<Map<number, RowError>> {
  const errors = new Map<number, RowError>();
  const names = [...new Set(rows.map((r) => r.values.yardName).filter((v): v is string => typeof v === 'string'))];
  const ids = [...new Set(rows.map((r) => r.values.yardId).filter((v): v is string => typeof v === 'string'))];
  const yards = await db.prisma.yard.findMany({
    where: { orgId, OR: [{ id: { in: ids } }, { name: { in: names, mode: 'insensitive' } }] },
    select: { id: true, name: true },
  });
  const byName = new Map(yards.map((y) => [y.name.toLowerCase(), y.id]));
  const known = new Set(yards.map((y) => y.id));
  for (const row of rows) {
    const { yardId, yardName } = row.values;
    if (typeof yardId === 'string' && !known.has(yardId))
      errors.set(row.rowNumber, {
        code: 'unknown_reference',
        column: 'yardId',
        value: yardId,
        message: 'no yard with this id',
      });
    else if (typeof yardId !== 'string' && typeof yardName === 'string') {
      const id = byName.get(yardName.toLowerCase());
      if (id) row.values.yardId = id;
      else
        errors.set(row.rowNumber, {
          code: 'unknown_reference',
          column: 'yardName',
          value: yardName,
          message: 'no yard with this name',
        });
    }
  }
  return errors;
}

export const partImport = recordImport({
  scope: 'parts:write',
  fields: FIELDS,
  keyFields: ['number'],
  async find(db, orgId, keys) {
    const numbers = [...new Set(keys.map((k) => k.value.toLowerCase()))];
    if (numbers.length === 0) return [];
    const rows = await db.prisma.$queryRawUnsafe<{ id: string }[]>(
      `SELECT id FROM parts WHERE "orgId" = $1 AND lower(number) = ANY($2::text[])`,
      orgId,
      numbers,
    );
    const parts = await db.prisma.part.findMany({ where: { orgId, id: { in: rows.map((r) => r.id) } } });
    return parts.map((record) => ({ record, key: `number:${record.number.toLowerCase()}` }));
  },
  prepare: (db, ctx, rows) => resolveYards(db, ctx.orgId, rows),
  check(values) {
    if ((values.quantity === undefined) !== (values.yardId === undefined))
      return { code: 'missing_value', column: 'quantity', value: null, message: 'quantity and a yard go together' };
    return null;
  },
  create: CreateImportedPart,
  update: UpdatePartBody,
  updatable: UPDATABLE_PART_FIELDS,
  changed: (before: Part, patch) =>
    UPDATABLE_PART_FIELDS.filter((f) => patch[f] !== undefined && !sameValue(before[f], patch[f])),
  async insert(tx, ctx, input) {
    const { quantity: opening, yardId, ...fields } = input;
    const data: Record<string, unknown> = { ...fields };
    for (const f of DECIMALS) if (data[f] != null) data[f] = dec(data[f] as number);
    const part = await tx.part.create({
      data: {
        ...(data as typeof fields),
        orgId: ctx.orgId,
        trackInventory: input.trackInventory ?? true,
        createdById: ctx.actorId,
      },
    });
    if (opening !== undefined && yardId && part.trackInventory) {
      const adjustment = {
        yardId,
        quantity: opening,
        reason: 'initial',
        note: 'opening stock (import)',
      } as AdjustmentInput;
      await applyAdjustment(tx, ctx, part, adjustment);
    }
    return part;
  },
  async lock(tx, orgId, id) {
    try {
      return await lockOwnedPart(tx, orgId, id);
    } catch (err) {
      if ((err as { code?: string }).code === notFound('Part').code) return null;
      throw err;
    }
  },
  async apply(tx, _ctx, before, patch) {
    const data: Record<string, unknown> = {};
    for (const f of UPDATABLE_PART_FIELDS) {
      const v = patch[f];
      if (v === undefined || sameValue(before[f], v)) continue;
      data[f] = DECIMALS.has(f) && v !== null ? dec(v as number) : v;
    }
    if (Object.keys(data).length === 0) return null;
    return tx.part.update({ where: { id: before.id }, data });
  },
  async remove(tx, orgId, id) {
    await tx.part.deleteMany({ where: { id, orgId } });
  },
});
