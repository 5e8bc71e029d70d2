// Tools imported: rows match tools by serial, else by name (without case); the tools module's own writes, audit
// events and webhooks.
import type { Tool } from '../../generated/prisma/client.ts';
import { notFound } from '../../core/errors.ts';
import { lockOwnedTool } from '../tools/tools.repository.ts';
import { applyToolPatch, changedToolFields, insertTool } from '../tools/tools.operations.ts';
import { CreateToolBody, UPDATABLE_FIELDS, UpdateToolBody } from '../tools/tools.schemas.ts';
import type { FieldSpec } from './import-fields.rules.ts';
import { recordImport } from './import-records.operations.ts';

const FIELDS: FieldSpec[] = [
  ...['name', 'category', 'makeModel', 'serial', 'supplier', 'notes'].map((name) => ({ name, kind: 'text' as const })),
  ...['parentKitId', 'assignedUserId', 'assignedVehicleId', 'assignedYardId'].map((name) => ({
    name,
    kind: 'text' as const,
  })),
  { name: 'purchaseDate', kind: 'date' },
  { name: 'warrantyEndDate', kind: 'date' },
  { name: 'purchaseCost', kind: 'number' },
  { name: 'isConsumable', kind: 'boolean' },
  { name: 'stockLevel', kind: 'integer' },
  { name: 'minStockLevel', kind: 'integer' },
  { name: 'pmIntervalDays', kind: 'integer' },
  { name: 'status', kind: 'upper' },
];

export const toolImport = recordImport({
  scope: 'tools:write',
  fields: FIELDS,
  keyFields: ['serial', 'name'],
  async find(db, orgId, keys) {
    const of = (field: string) => [...new Set(keys.filter((k) => k.field === field).map((k) => k.value.toLowerCase()))];
    const rows = await db.prisma.$queryRawUnsafe<{ id: string }[]>(
      `SELECT id FROM tools WHERE "orgId" = $1 AND (lower(serial) = ANY($2::text[]) OR lower(name) = ANY($3::text[]))`,
      orgId,
      of('serial'),
      of('name'),
    );
    const tools = await db.prisma.tool.findMany({ where: { orgId, id: { in: rows.map((r) => r.id) } } });
    const out: { record: Tool; key: string }[] = [];
    for (const record of tools) {
      if (record.serial) out.push({ record, key: `serial:${record.serial.toLowerCase()}` });
      out.push({ record, key: `name:${record.name.toLowerCase()}` });
    }
    return out;
  },
  references: [
    ['parentKitId', 'tool'],
    ['assignedUserId', 'user'],
    ['assignedVehicleId', 'asset'],
    ['assignedYardId', 'yard'],
  ],
  create: CreateToolBody,
  update: UpdateToolBody,
  updatable: UPDATABLE_FIELDS,
  changed: (before, patch) => changedToolFields(before, patch),
  insert: (tx, ctx, input) => insertTool(tx, ctx, input, ctx.actorId),
  async lock(tx, orgId, id) {
    try {
      return await lockOwnedTool(tx, { orgId, keyId: 'import', actorId: null, requestId: 'import' }, id);
    } catch (err) {
      if ((err as { code?: string }).code === notFound('Tool').code) return null;
      throw err;
    }
  },
  apply: (tx, ctx, before, patch) => applyToolPatch(tx, ctx, before, patch),
  async remove(tx, orgId, id) {
    await tx.tool.deleteMany({ where: { id, orgId } });
  },
});
