// Writing fills inside the caller's transaction: the reading through the meter-log pipeline, the row, its event.
import { randomUUID } from 'node:crypto';
import type { FuelEntry, Prisma } from '../../generated/prisma/client.ts';
import type { Tx } from '../../db/transaction.ts';
import type { RequestContext } from '../../core/context.ts';
import { ValidationError, type FieldErrors } from '../../core/errors.ts';
import { dec, toSql, type Dec } from '../../core/money.ts';
import { emit } from '../../events/outbox.ts';
import { recordReading } from '../hours/hours.operations.ts';
import { assertReferences } from '../shared/references.ts';
import { assertVendorReference } from '../vendors/vendors.repository.ts';
import { fillTarget } from './fuel-entries.repository.ts';
import { fillPrice, fillRefusal, toLiters, type FuelEntryUnit } from './fuel-entries.rules.ts';
import type { CreateFuelEntryInput, UpdateFuelEntryInput } from './fuel-entries.schemas.ts';

/** A fill may be stamped this far ahead of the server clock, as a meter reading may. */
const FUTURE_SKEW_MS = 5 * 60 * 1000;

const bothOrNeither = () =>
  new ValidationError({
    totalCost: 'give exactly one of totalCost and pricePerUnit',
    pricePerUnit: 'give exactly one of totalCost and pricePerUnit',
  });

/** The pipeline's field names are the reading's; on a fill they are meterReading, fueledAt and note. */
const FIELD_OF_READING: Record<string, string> = { hoursReading: 'meterReading', loggedAt: 'fueledAt' };

/**
 * The fill's reading as a meter log (source fuel), under every rule of POST /hours; its 422s name the fill's fields
 * (meterReading, fueledAt).
 */
async function recordFillReading(
  tx: Tx,
  ctx: RequestContext,
  fill: { id: string; assetId: string; reading: number; at: Date; note: string | null; projectId: string | null },
): Promise<string> {
  try {
    const { log } = await recordReading(
      tx,
      ctx,
      {
        assetId: fill.assetId,
        hoursReading: fill.reading,
        loggedAt: fill.at,
        note: fill.note,
        projectId: fill.projectId,
        state: null,
        loggedByDeviceId: null,
      },
      null,
      { source: 'fuel', id: fill.id },
    );
    return log.id;
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    const errors: FieldErrors = {};
    for (const [field, message] of Object.entries(err.fieldErrors)) errors[FIELD_OF_READING[field] ?? field] = message;
    throw new ValidationError(errors, err.message);
  }
}

/** The project and the vendor named; an archived vendor takes no new fills (one the fill already names stays). */
async function checkReferences(
  tx: Tx,
  ctx: RequestContext,
  refs: { projectId?: string | null; vendorId?: string | null },
  before?: FuelEntry,
) {
  await assertReferences(tx, ctx.orgId, [{ field: 'projectId', kind: 'project', id: refs.projectId }]);
  if (refs.vendorId !== before?.vendorId) await assertVendorReference(tx, ctx.orgId, refs.vendorId);
}

function notInFuture(at: Date, now: Date) {
  if (at.getTime() > now.getTime() + FUTURE_SKEW_MS) throw new ValidationError({ fueledAt: 'cannot be in the future' });
}

const eventData = (e: FuelEntry, actorId: string | null) => ({
  fuelEntryId: e.id,
  assetId: e.assetId,
  fueledAt: e.fueledAt.toISOString(),
  volume: dec(e.volume).toNumber(),
  unit: e.unit as FuelEntryUnit,
  totalCost: dec(e.totalCost).toNumber(),
  pricePerUnit: dec(e.pricePerUnit).toNumber(),
  meterReading: e.meterReading,
  logId: e.logId,
  void: e.void,
  partial: e.partial,
  projectId: e.projectId,
  vendorId: e.vendorId,
  externalId: e.externalId,
  actorId,
});

/** A new fill: the asset's rules, the reading, the row and fuel_entry.created. */
export async function insertFuelEntry(tx: Tx, ctx: RequestContext, input: CreateFuelEntryInput): Promise<FuelEntry> {
  const volume = dec(input.volume);
  const price = fillPrice(volume, input);
  if (!price) throw bothOrNeither();
  const asset = await fillTarget(tx, ctx.orgId, input.assetId);
  if (!asset) throw new ValidationError({ assetId: 'no asset with this id in your organisation' });
  notInFuture(input.fueledAt, new Date());
  const refusal = fillRefusal(asset, input.fueledAt);
  if (refusal) throw new ValidationError({ [refusal.field]: refusal.message });
  await checkReferences(tx, ctx, input);
  const id = randomUUID();
  const logId =
    input.meterReading != null
      ? await recordFillReading(tx, ctx, {
          id,
          assetId: asset.id,
          reading: input.meterReading,
          at: input.fueledAt,
          note: input.note ?? null,
          projectId: input.projectId ?? null,
        })
      : null;
  const entry = await tx.fuelEntry.create({
    data: {
      id,
      orgId: ctx.orgId,
      assetId: asset.id,
      fueledAt: input.fueledAt,
      volume: toSql(volume),
      unit: input.unit,
      volumeLiters: toSql(toLiters(volume, input.unit)),
      totalCost: toSql(price.totalCost),
      pricePerUnit: toSql(price.pricePerUnit),
      fuelType: input.fuelType ?? null,
      vendorId: input.vendorId ?? null,
      meterReading: input.meterReading ?? null,
      logId,
      void: input.void ?? false,
      partial: input.partial ?? false,
      externalId: input.externalId ?? null,
      cardNumber: input.cardNumber ?? null,
      projectId: input.projectId ?? null,
      note: input.note ?? null,
      createdById: ctx.actorId,
    },
  });
  await emit(tx, ctx.orgId, 'fuel_entry.created', eventData(entry, ctx.actorId));
  return entry;
}

const SIMPLE_FIELDS = ['fuelType', 'vendorId', 'void', 'partial', 'cardNumber', 'projectId', 'note'] as const;

/**
 * Applies a change to a fill (PATCH, or a repeated externalId): the cost follows the volume (a new total or price
 * re-derives the other; a new volume alone keeps the total), a reading is recorded once and never rewritten.
 * Emits fuel_entry.updated with the changed fields, when any changed.
 */
export async function updateFuelEntry(
  tx: Tx,
  ctx: RequestContext,
  before: FuelEntry,
  patch: UpdateFuelEntryInput & { externalId?: string | null },
): Promise<FuelEntry> {
  const data: Prisma.FuelEntryUncheckedUpdateInput = {};
  const changed = new Set<string>();
  const set = (field: string, value: unknown, same: boolean) => {
    if (same) return;
    (data as Record<string, unknown>)[field] = value;
    changed.add(field);
  };
  const fueledAt = patch.fueledAt ?? before.fueledAt;
  if (patch.fueledAt) {
    notInFuture(fueledAt, new Date());
    const asset = await fillTarget(tx, ctx.orgId, before.assetId);
    if (asset?.purchaseDate && fueledAt < asset.purchaseDate)
      throw new ValidationError({
        fueledAt: `is before the asset's purchaseDate (${asset.purchaseDate.toISOString()})`,
      });
    set('fueledAt', fueledAt, fueledAt.getTime() === before.fueledAt.getTime());
  }
  const volume: Dec = patch.volume !== undefined ? dec(patch.volume) : dec(before.volume);
  const unit = (patch.unit ?? before.unit) as FuelEntryUnit;
  const priceGiven = patch.totalCost != null || patch.pricePerUnit != null;
  const price = priceGiven
    ? fillPrice(volume, patch)
    : fillPrice(volume, { totalCost: dec(before.totalCost).toNumber() });
  if (!price) throw bothOrNeither();
  set('volume', toSql(volume), volume.eq(dec(before.volume)));
  set('unit', unit, unit === before.unit);
  set('volumeLiters', toSql(toLiters(volume, unit)), toLiters(volume, unit).eq(dec(before.volumeLiters)));
  set('totalCost', toSql(price.totalCost), price.totalCost.eq(dec(before.totalCost)));
  set('pricePerUnit', toSql(price.pricePerUnit), price.pricePerUnit.eq(dec(before.pricePerUnit)));
  for (const field of SIMPLE_FIELDS) {
    const value = patch[field];
    if (value !== undefined) set(field, value, value === before[field]);
  }
  if (patch.externalId !== undefined) set('externalId', patch.externalId, patch.externalId === before.externalId);
  await checkReferences(tx, ctx, patch, before);
  if (patch.meterReading !== undefined && patch.meterReading !== before.meterReading) {
    if (before.logId)
      throw new ValidationError({
        meterReading: `is recorded already (${before.meterReading}) and is part of the meter history; void the entry to leave it out`,
      });
    if (patch.meterReading !== null) {
      const logId = await recordFillReading(tx, ctx, {
        id: before.id,
        assetId: before.assetId,
        reading: patch.meterReading,
        at: fueledAt,
        note: patch.note !== undefined ? patch.note : before.note,
        projectId: patch.projectId !== undefined ? patch.projectId : before.projectId,
      });
      set('meterReading', patch.meterReading, false);
      set('logId', logId, false);
    }
  }
  if (changed.size === 0) return before;
  const after = await tx.fuelEntry.update({ where: { id: before.id }, data });
  await emit(tx, ctx.orgId, 'fuel_entry.updated', { ...eventData(after, ctx.actorId), changedFields: [...changed] });
  return after;
}
