// Fuel entries imported (a fuel-card statement): rows match entries by externalId; a row finds its asset by
// cardNumber first (cards assigned with PATCH /assets/{id}), then assetId or the `match` column. With a mapped
// `product` and options.fuelProducts, rows of other products are read but not imported (unchanged, not_fuel).
import type { FuelEntry } from '../../generated/prisma/client.ts';
import { dec } from '../../core/money.ts';
import { insertFuelEntry, updateFuelEntry } from '../fuel-entries/fuel-entries.operations.ts';
import { rejectFillReading } from '../fuel-entries/fuel-entries.repository.ts';
import { CreateFuelEntryBody, UpdateFuelEntryBody } from '../fuel-entries/fuel-entries.schemas.ts';
import type { FieldSpec, RowError } from './import-fields.rules.ts';
import { assetsById, assetsByMatch } from './import-lookups.repository.ts';
import { recordImport } from './import-records.operations.ts';
import { ASSET_MATCHES } from './imports.schemas.ts';

const text = (name: string): FieldSpec => ({ name, kind: 'text' });
const num = (name: string): FieldSpec => ({ name, kind: 'number' });

const FIELDS: FieldSpec[] = [
  text('externalId'),
  text('cardNumber'),
  text('assetId'),
  ...ASSET_MATCHES.map(text),
  { name: 'fueledAt', kind: 'date' },
  num('volume'),
  { name: 'unit', kind: 'upper' },
  num('totalCost'),
  num('pricePerUnit'),
  text('fuelType'),
  text('vendorId'),
  num('meterReading'),
  { name: 'void', kind: 'boolean' },
  { name: 'partial', kind: 'boolean' },
  text('projectId'),
  text('note'),
  text('product'),
];
const UPDATABLE = [
  'fueledAt',
  'volume',
  'unit',
  'totalCost',
  'pricePerUnit',
  'fuelType',
  'vendorId',
  'meterReading',
  'void',
  'partial',
  'cardNumber',
  'projectId',
  'note',
] as const;
/** How statements write units. */
const UNITS: Record<string, string> = {
  L: 'LITER',
  LT: 'LITER',
  LTR: 'LITER',
  LITRE: 'LITER',
  LITRES: 'LITER',
  LITERS: 'LITER',
  GAL: 'GALLON',
  GALLONS: 'GALLON',
  'US GAL': 'GALLON',
  'UK GAL': 'GALLON_UK',
};
const DECIMALS = new Set(['volume', 'totalCost', 'pricePerUnit']);

function differs(before: FuelEntry, field: (typeof UPDATABLE)[number], value: unknown): boolean {
  const was = before[field];
  if (field === 'fueledAt') return (was as Date).getTime() !== (value as Date).getTime();
  if (DECIMALS.has(field))
    return value === null ? was !== null : was === null || !dec(was as never).eq(value as number);
  return was !== value;
}

export const fuelEntryImport = recordImport({
  scope: 'fuel:write',
  fields: FIELDS,
  keyFields: ['externalId'],
  async find(db, orgId, keys) {
    const ids = [...new Set(keys.map((k) => k.value))];
    if (ids.length === 0) return [];
    const entries = await db.prisma.fuelEntry.findMany({ where: { orgId, externalId: { in: ids } } });
    return entries.map((record) => ({ record, key: `externalId:${record.externalId!.toLowerCase()}` }));
  },
  skip(values, s) {
    if (!s.fuelProducts || typeof values.product !== 'string') return null;
    const fuel = s.fuelProducts.some((p) => p.toLowerCase() === (values.product as string).toLowerCase());
    return fuel
      ? null
      : { code: 'not_fuel', column: 'product', value: values.product, message: 'not one of options.fuelProducts' };
  },
  async prepare(db, ctx, rows, s) {
    const errors = new Map<number, RowError>();
    const cards = [...new Set(rows.map((r) => r.values.cardNumber).filter((c): c is string => typeof c === 'string'))];
    const assigned = await db.prisma.assetFuelCard.findMany({
      where: { orgId: ctx.orgId, cardNumber: { in: cards } },
      select: { cardNumber: true, assetId: true },
    });
    const byCard = new Map(assigned.map((c) => [c.cardNumber, c.assetId]));
    const strings = (f: string) => rows.map((r) => r.values[f]).filter((v): v is string => typeof v === 'string');
    const [byId, byMatch] = await Promise.all([
      assetsById(db, ctx.orgId, strings('assetId')),
      assetsByMatch(db, ctx.orgId, s.match, strings(s.match)),
    ]);
    for (const row of rows) {
      const v = row.values;
      if (typeof v.unit === 'string') v.unit = UNITS[v.unit] ?? v.unit;
      const card = typeof v.cardNumber === 'string' ? byCard.get(v.cardNumber) : undefined;
      const matched = typeof v[s.match] === 'string' ? (byMatch.get((v[s.match] as string).toLowerCase()) ?? []) : [];
      if (card) v.assetId = card;
      else if (typeof v.assetId === 'string' && byId.has(v.assetId)) continue;
      else if (matched.length === 1) v.assetId = matched[0]!.id;
      else if (typeof v.cardNumber === 'string' && typeof v[s.match] !== 'string' && typeof v.assetId !== 'string')
        errors.set(row.rowNumber, {
          code: 'unknown_card',
          column: 'cardNumber',
          value: v.cardNumber,
          message: 'no asset has this fuel card (PATCH /assets/{id} fuelCardNumbers)',
        });
      else
        errors.set(row.rowNumber, {
          code: matched.length > 1 ? 'ambiguous_match' : 'unknown_asset',
          column: typeof v.assetId === 'string' ? 'assetId' : s.match,
          value: (v.assetId ?? v[s.match] ?? null) as string | null,
          message: matched.length > 1 ? `${matched.length} assets match` : 'no asset matches the row',
        });
    }
    return errors;
  },
  check(values) {
    if ((values.totalCost === undefined) === (values.pricePerUnit === undefined))
      return { code: 'invalid_value', column: 'totalCost', value: null, message: 'give totalCost or pricePerUnit' };
    return null;
  },
  create: CreateFuelEntryBody,
  update: UpdateFuelEntryBody,
  updatable: UPDATABLE,
  changed: (before, patch) => UPDATABLE.filter((f) => patch[f] !== undefined && differs(before, f, patch[f])),
  // As PATCH /fuel-entries/{id} says: a recorded reading is part of the meter history.
  frozen: (before, patch) =>
    before.logId && patch.meterReading !== undefined && patch.meterReading !== before.meterReading
      ? `meterReading is recorded already (${before.meterReading}); void the entry to leave it out`
      : null,
  insert: (tx, ctx, input) => insertFuelEntry(tx, ctx, input),
  async lock(tx, orgId, id) {
    await tx.$queryRaw`SELECT id FROM fuel_entries WHERE id = ${id} AND "orgId" = ${orgId} FOR UPDATE`;
    return tx.fuelEntry.findFirst({ where: { id, orgId } });
  },
  apply: (tx, ctx, before, patch) => updateFuelEntry(tx, ctx, before, patch),
  async remove(tx, orgId, id) {
    const entry = await tx.fuelEntry.findFirst({ where: { id, orgId } });
    if (!entry) return;
    await tx.fuelEntry.delete({ where: { id } });
    if (entry.logId) await rejectFillReading(tx, orgId, entry.logId, null);
  },
});
