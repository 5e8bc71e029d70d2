import { randomUUID } from 'node:crypto';
import type { Tx } from '../../db/transaction.ts';
import type { InventoryCostMethod, InventoryEntryType } from '../../generated/prisma/client.ts';
import { conflict } from '../../core/errors.ts';
import { dec, Dec, round, toSql, ZERO } from '../../core/money.ts';
import { emit } from '../../events/outbox.ts';
import {
  crossedReorderPoint,
  takeFromLayers,
  type LayerPiece,
  type LedgerEntry,
  type LedgerSource,
  type LedgerSourceType,
  type OpenLayer,
} from './part-costing.rules.ts';

export type { LedgerEntry, LedgerSource, LedgerSourceType } from './part-costing.rules.ts';

interface Movement {
  /** The entry's id when the caller needs it before the write (an adjustment names itself as its source). */
  id?: string;
  orgId: string;
  partId: string;
  yardId: string;
  type: InventoryEntryType;
  source: LedgerSource | null;
  /** The user recorded as the entry's author (null for the system). */
  actor: string | null;
  reason?: string | null;
  note?: string | null;
}

export interface IncomingMovement extends Movement {
  /** What comes in, each piece becoming a cost layer (a transfer brings the layers it took). */
  pieces: LayerPiece[];
  /** The entry's unit cost when the caller names one (a receipt's price); else the total over the quantity. */
  unitCost?: Dec;
}

export interface OutgoingMovement extends Movement {
  quantity: Dec;
}

export interface StockState {
  onHand: Dec;
  value: Dec;
  method: InventoryCostMethod;
  reorderPoint: Dec | null;
}

type StockRow = { onHand: unknown; value: unknown; method: InventoryCostMethod; reorderPoint: unknown };

const toState = (r: StockRow): StockState => ({
  onHand: dec(r.onHand as string),
  value: dec(r.value as string),
  method: r.method,
  reorderPoint: r.reorderPoint == null ? null : dec(r.reorderPoint as string),
});

/**
 * Creates the stock row if missing and locks it until the transaction ends: every movement of one part in one
 * yard queues here, so concurrent issues of the last units run one after the other and none oversells. The cost
 * method is read after the lock, so a method switch waiting on this row sees the movement's layers.
 */
export async function lockStock(tx: Tx, m: Movement): Promise<StockState> {
  const rows = await tx.$queryRawUnsafe<StockRow[]>(
    `WITH s AS (
       INSERT INTO "part_stock" ("orgId", "partId", "yardId") VALUES ($1, $2, $3)
       ON CONFLICT ("orgId", "partId", "yardId") DO UPDATE SET "onHand" = "part_stock"."onHand"
       RETURNING "onHand", "value")
     SELECT s."onHand", s."value", o."inventoryCostMethod" AS "method", p."reorderPoint"
     FROM s, "organizations" o, "parts" p, "yards" y
     WHERE o."id" = $1 AND p."id" = $2 AND p."orgId" = $1 AND y."id" = $3 AND y."orgId" = $1`,
    m.orgId,
    m.partId,
    m.yardId,
  );
  // The callers check the part and yard first; this keeps a foreign id from ever reaching the ledger.
  if (!rows[0]) throw conflict('stock_reference_invalid', 'The part or the yard is not in this organisation');
  return toState(rows[0]);
}

async function lockStockForOutgoing(tx: Tx, m: Movement): Promise<StockState> {
  const rows = await tx.$queryRawUnsafe<StockRow[]>(
    `SELECT s."onHand", s."value", o."inventoryCostMethod" AS "method", p."reorderPoint"
     FROM "part_stock" s JOIN "organizations" o ON o."id" = s."orgId" JOIN "parts" p ON p."id" = s."partId"
     WHERE s."orgId" = $1 AND s."partId" = $2 AND s."yardId" = $3 FOR UPDATE OF s`,
    m.orgId,
    m.partId,
    m.yardId,
  );
  return rows[0] ? toState(rows[0]) : { onHand: ZERO, value: ZERO, method: 'FIFO', reorderPoint: null };
}

const ENTRY_COLUMNS = `"id", "orgId", "partId", "yardId", "type", "quantity", "previousQuantity", "currentQuantity",
  "unitCost", "totalCost", "reason", "note", "sourceType", "sourceId", "createdById", "createdAt"`;

type EntryRow = Omit<
  LedgerEntry,
  'source' | 'quantity' | 'previousQuantity' | 'currentQuantity' | 'unitCost' | 'totalCost'
> & {
  quantity: unknown;
  previousQuantity: unknown;
  currentQuantity: unknown;
  unitCost: unknown;
  totalCost: unknown;
  sourceType: string | null;
  sourceId: string | null;
};

/** A ledger row as read from the database, numbers as decimals. */
export const ledgerEntryOf = (r: EntryRow): LedgerEntry => ({
  id: r.id,
  orgId: r.orgId,
  partId: r.partId,
  yardId: r.yardId,
  type: r.type,
  quantity: dec(r.quantity as string),
  previousQuantity: dec(r.previousQuantity as string),
  currentQuantity: dec(r.currentQuantity as string),
  unitCost: dec(r.unitCost as string),
  totalCost: dec(r.totalCost as string),
  reason: r.reason,
  note: r.note,
  source: r.sourceType && r.sourceId ? { type: r.sourceType as LedgerSourceType, id: r.sourceId } : null,
  createdAt: r.createdAt,
  createdById: r.createdById,
});

/** The stock row's new state and the ledger entry, in one statement. */
async function writeEntry(
  tx: Tx,
  m: Movement,
  before: StockState,
  change: { quantity: Dec; value: Dec; unitCost: Dec },
): Promise<LedgerEntry> {
  const id = m.id ?? randomUUID();
  const onHand = before.onHand.plus(change.quantity);
  const value = before.value.plus(change.value);
  const rows = await tx.$queryRawUnsafe<EntryRow[]>(
    `WITH s AS (
       UPDATE "part_stock" SET "onHand" = $6::numeric, "value" = $16::numeric, "updatedAt" = now()
       WHERE "orgId" = $2 AND "partId" = $3 AND "yardId" = $4 RETURNING 1)
     INSERT INTO "inventory_ledger" (${ENTRY_COLUMNS})
     SELECT $1, $2, $3, $4, $5::"InventoryEntryType", $7::numeric, $8::numeric, $6::numeric, $9::numeric,
            $10::numeric, $11, $12, $13, $14, $15, now()
     FROM s
     RETURNING ${ENTRY_COLUMNS}`,
    id,
    m.orgId,
    m.partId,
    m.yardId,
    m.type,
    toSql(onHand),
    toSql(change.quantity),
    toSql(before.onHand),
    toSql(round(change.unitCost, 4)),
    toSql(change.value.abs()),
    m.reason ?? null,
    m.note ?? null,
    m.source?.type ?? null,
    m.source?.id ?? null,
    m.actor,
    toSql(value),
  );
  return ledgerEntryOf(rows[0]);
}

/** Merges the open layers of each part and yard (of one part and yard when given) into the oldest one. */
export async function collapseLayers(tx: Tx, orgId: string, only?: { partId: string; yardId: string }): Promise<void> {
  const scope = only ? `AND "partId" = $2 AND "yardId" = $3` : '';
  await tx.$executeRawUnsafe(
    `WITH open AS (
       SELECT "id", row_number() OVER w AS rn, count(*) OVER p AS n,
              sum("remaining") OVER p AS tq, sum("remainingValue") OVER p AS tv
       FROM "inventory_cost_layers" WHERE "orgId" = $1 ${scope} AND "remaining" > 0
       WINDOW p AS (PARTITION BY "partId", "yardId"),
              w AS (PARTITION BY "partId", "yardId" ORDER BY "receivedAt", "id"))
     UPDATE "inventory_cost_layers" l
     SET "remaining" = CASE WHEN o.rn = 1 THEN o.tq ELSE 0 END,
         "remainingValue" = CASE WHEN o.rn = 1 THEN o.tv ELSE 0 END,
         "unitCost" = CASE WHEN o.rn = 1 THEN round(o.tv / o.tq, 4) ELSE l."unitCost" END
     FROM open o WHERE l."id" = o."id" AND o.n > 1`,
    orgId,
    ...(only ? [only.partId, only.yardId] : []),
  );
}

/** Adds stock: one cost layer per piece (merged into one under AVERAGE) and one ledger entry. */
export async function addStock(tx: Tx, m: IncomingMovement): Promise<LedgerEntry> {
  const before = await lockStock(tx, m);
  const quantity = m.pieces.reduce((a, p) => a.plus(p.quantity), ZERO);
  const value = m.pieces.reduce((a, p) => a.plus(p.value), ZERO);
  const entry = await writeEntry(tx, m, before, {
    quantity,
    value,
    unitCost: m.unitCost ?? (quantity.isZero() ? ZERO : value.div(quantity)),
  });
  await tx.$executeRawUnsafe(
    `INSERT INTO "inventory_cost_layers"
       ("id", "orgId", "partId", "yardId", "entryId", "quantity", "unitCost", "remaining", "remainingValue", "receivedAt")
     SELECT gen_random_uuid()::text, $1, $2, $3, $4, q, round(c, 4), q, v, r
     FROM unnest($5::numeric[], $6::numeric[], $7::numeric[], $8::timestamptz[]) AS x(q, c, v, r)`,
    m.orgId,
    m.partId,
    m.yardId,
    entry.id,
    m.pieces.map((p) => toSql(p.quantity)),
    m.pieces.map((p) => toSql(p.unitCost)),
    m.pieces.map((p) => toSql(p.value)),
    m.pieces.map((p) => p.receivedAt ?? entry.createdAt),
  );
  if (before.method === 'AVERAGE') await collapseLayers(tx, m.orgId, { partId: m.partId, yardId: m.yardId });
  return entry;
}

/**
 * Takes stock by the organisation's cost method (FIFO: oldest layers first; AVERAGE: the one merged layer), 409
 * `insufficient_stock` when the yard holds less. Returns the entry and the pieces taken, for a transfer to carry.
 */
export async function takeStock(tx: Tx, m: OutgoingMovement): Promise<{ entry: LedgerEntry; pieces: LayerPiece[] }> {
  const before = await lockStockForOutgoing(tx, m);
  if (before.onHand.lt(m.quantity))
    throw conflict('insufficient_stock', 'Not enough stock of this part in this yard', {
      onHand: before.onHand.toNumber(),
      requested: m.quantity.toNumber(),
    });
  const layers = await tx.$queryRawUnsafe<
    { id: string; remaining: unknown; remainingValue: unknown; receivedAt: Date }[]
  >(
    `SELECT "id", "remaining", "remainingValue", "receivedAt" FROM "inventory_cost_layers"
     WHERE "orgId" = $1 AND "partId" = $2 AND "yardId" = $3 AND "remaining" > 0 ORDER BY "receivedAt", "id"`,
    m.orgId,
    m.partId,
    m.yardId,
  );
  const open: OpenLayer[] = layers.map((l) => ({
    id: l.id,
    remaining: dec(l.remaining as string),
    remainingValue: dec(l.remainingValue as string),
    receivedAt: l.receivedAt,
  }));
  const { pieces, updates } = takeFromLayers(open, m.quantity);
  if (updates.length)
    await tx.$executeRawUnsafe(
      `UPDATE "inventory_cost_layers" l SET "remaining" = x.q, "remainingValue" = x.v
       FROM unnest($1::text[], $2::numeric[], $3::numeric[]) AS x(id, q, v) WHERE l."id" = x.id AND l."orgId" = $4`,
      updates.map((u) => u.id),
      updates.map((u) => toSql(u.remaining)),
      updates.map((u) => toSql(u.remainingValue)),
      m.orgId,
    );
  const value = pieces.reduce((a, p) => a.plus(p.value), ZERO);
  const entry = await writeEntry(tx, m, before, {
    quantity: m.quantity.neg(),
    value: value.neg(),
    unitCost: m.quantity.isZero() ? ZERO : value.div(m.quantity),
  });
  if (crossedReorderPoint(before.onHand, entry.currentQuantity, before.reorderPoint))
    await emit(tx, m.orgId, 'part.low_stock', {
      partId: m.partId,
      yardId: m.yardId,
      onHand: entry.currentQuantity.toNumber(),
      reorderPoint: before.reorderPoint!.toNumber(),
      entryId: entry.id,
      at: entry.createdAt.toISOString(),
    });
  return { entry, pieces };
}

/** A zero-quantity entry (a count that found the stock as recorded): the audit fact, with no change. */
export async function recordNoChange(tx: Tx, m: Movement): Promise<LedgerEntry> {
  const before = await lockStock(tx, m);
  const unitCost = before.onHand.isZero() ? ZERO : before.value.div(before.onHand);
  return writeEntry(tx, m, before, { quantity: ZERO, value: ZERO, unitCost });
}

export interface ReceiveStockInput {
  orgId: string;
  partId: string;
  yardId: string;
  quantity: Dec;
  unitCost: Dec;
  source: { type: 'purchase_order'; id: string };
  actor: string | null;
  note?: string | null;
  /** When the goods arrived: the age of the cost layer FIFO takes by (default now). */
  occurredAt?: Date;
}

/**
 * A purchase-order receipt: a cost layer at `unitCost`, a `receipt` ledger entry and the stock row, in `tx`. A
 * part that does not track inventory takes no stock: nothing is written and the answer is null.
 */
export async function receiveStock(tx: Tx, input: ReceiveStockInput): Promise<LedgerEntry | null> {
  const part = await tx.$queryRaw<{ trackInventory: boolean }[]>`
    SELECT "trackInventory" FROM "parts" WHERE "id" = ${input.partId} AND "orgId" = ${input.orgId}`;
  if (!part[0]) throw conflict('part_not_found', 'The part is not in this organisation');
  if (!part[0].trackInventory) return null;
  return addStock(tx, {
    orgId: input.orgId,
    partId: input.partId,
    yardId: input.yardId,
    type: 'receipt',
    source: input.source,
    actor: input.actor,
    note: input.note ?? null,
    unitCost: input.unitCost,
    pieces: [
      {
        quantity: input.quantity,
        unitCost: input.unitCost,
        value: round(input.quantity.times(input.unitCost), 2),
        receivedAt: input.occurredAt,
      },
    ],
  });
}

export { Dec };
