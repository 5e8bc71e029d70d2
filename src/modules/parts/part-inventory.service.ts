import { randomUUID } from 'node:crypto';
import type { Part } from '../../generated/prisma/client.ts';
import { transaction, type Tx } from '../../db/transaction.ts';
import type { RequestContext } from '../../core/context.ts';
import { conflict, notFound, ValidationError, type FieldErrors } from '../../core/errors.ts';
import { dec, toWire } from '../../core/money.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import { orgCurrency } from '../organization/organization.repository.ts';
import { addStock, lockStock, takeStock } from './part-ledger.operations.ts';
import { applyAdjustment } from './part-adjustment.operations.ts';
import { findLedgerPage, findValuationPage, valuationTotal } from './part-inventory.repository.ts';
import {
  ledgerEntryWire,
  type AdjustmentInput,
  type LedgerQueryInput,
  type TransferInput,
  type ValuationQueryInput,
} from './part-inventory.schemas.ts';
import { valuationCsvStream } from './part-valuation-csv.adapter.ts';

const CSV_PAGE_ROWS = 5000;

/**
 * The part, share-locked until the transaction ends (movements run side by side; a PATCH switching
 * trackInventory off waits for them), 404 for another organisation's; 409 when it keeps no stock.
 */
export async function stockedPart(tx: Tx, orgId: string, id: string): Promise<Part> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    SELECT "id" FROM "parts" WHERE "id" = ${id} AND "orgId" = ${orgId} FOR SHARE`;
  if (!rows[0]) throw notFound('Part');
  const part = await tx.part.findFirstOrThrow({ where: { id, orgId } });
  if (!part.trackInventory)
    throw conflict('inventory_not_tracked', 'This part does not track inventory (trackInventory is false)');
  return part;
}

/** 422 naming every field whose yard is not in the organisation. */
export async function assertYards(tx: Tx, orgId: string, yards: Record<string, string>): Promise<void> {
  const ids = [...new Set(Object.values(yards))];
  const found = await tx.yard.findMany({ where: { orgId, id: { in: ids } }, select: { id: true } });
  const known = new Set(found.map((y) => y.id));
  const errors: FieldErrors = {};
  for (const [field, id] of Object.entries(yards))
    if (!known.has(id)) errors[field] = 'is not a yard of this organisation';
  if (Object.keys(errors).length) throw new ValidationError(errors);
}

export function createPartInventoryService({ db }: Pick<ServiceDeps, 'db'>) {
  return {
    /**
     * A signed change, or a count whose difference is the change. A count equal to the stock still writes an
     * entry of 0: the count happened, and the ledger is the audit trail of the shelf.
     */
    async adjust(ctx: RequestContext, partId: string, input: AdjustmentInput) {
      return transaction(db, async (tx) => {
        const part = await stockedPart(tx, ctx.orgId, partId);
        await assertYards(tx, ctx.orgId, { yardId: input.yardId });
        const entry = await applyAdjustment(tx, ctx, part, input);
        return { ok: true as const, currency: await orgCurrency(tx, ctx.orgId), entry: ledgerEntryWire(entry) };
      });
    },

    /** Two entries under one transfer id; the layers taken at the source arrive at the destination unchanged. */
    async transfer(ctx: RequestContext, partId: string, input: TransferInput) {
      return transaction(db, async (tx) => {
        await stockedPart(tx, ctx.orgId, partId);
        await assertYards(tx, ctx.orgId, { fromYardId: input.fromYardId, toYardId: input.toYardId });
        const transferId = randomUUID();
        const base = {
          orgId: ctx.orgId,
          partId,
          source: { type: 'transfer' as const, id: transferId },
          actor: ctx.actorId,
          note: input.note ?? null,
        };
        // Both rows locked in yard order: two opposite transfers of one part queue instead of deadlocking.
        for (const yardId of [input.fromYardId, input.toYardId].sort())
          await lockStock(tx, { ...base, yardId, type: 'transfer_in' });
        const out = await takeStock(tx, {
          ...base,
          yardId: input.fromYardId,
          type: 'transfer_out',
          quantity: dec(input.quantity),
        });
        const into = await addStock(tx, { ...base, yardId: input.toYardId, type: 'transfer_in', pieces: out.pieces });
        return {
          ok: true as const,
          currency: await orgCurrency(tx, ctx.orgId),
          transferId,
          entries: [ledgerEntryWire(out.entry), ledgerEntryWire(into)],
        };
      });
    },

    async ledger(ctx: RequestContext, query: LedgerQueryInput) {
      const [{ entries, nextCursor }, currency] = await Promise.all([
        findLedgerPage(db.sql, ctx.orgId, query),
        orgCurrency(db.prisma, ctx.orgId),
      ]);
      return { ok: true as const, currency, entries: entries.map(ledgerEntryWire), nextCursor };
    },

    async valuation(ctx: RequestContext, query: ValuationQueryInput) {
      const [page, total, currency] = await Promise.all([
        findValuationPage(db.sql, ctx.orgId, query),
        valuationTotal(db.sql, ctx.orgId, query.yardId),
        orgCurrency(db.prisma, ctx.orgId),
      ]);
      return {
        ok: true as const,
        currency,
        rows: page.rows.map((r) => ({
          partId: r.partId,
          partNumber: r.partNumber,
          partName: r.partName,
          yardId: r.yardId,
          onHand: toWire(dec(r.onHand), 4),
          value: toWire(dec(r.value), 2),
        })),
        total: { value: toWire(dec(total), 2) },
        nextCursor: page.nextCursor,
      };
    },

    exportValuationCsv(ctx: RequestContext, query: ValuationQueryInput) {
      return valuationCsvStream((cursor) =>
        findValuationPage(db.sql, ctx.orgId, { yardId: query.yardId, cursor, limit: CSV_PAGE_ROWS }),
      );
    },
  };
}

export type PartInventoryService = ReturnType<typeof createPartInventoryService>;
