import { Prisma } from '../../generated/prisma/client.ts';
import { transaction } from '../../db/transaction.ts';
import type { RequestContext } from '../../core/context.ts';
import { conflict, ValidationError } from '../../core/errors.ts';
import { dec, toSql, toWire } from '../../core/money.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import { isUniqueViolation } from '../shared/unique-violation.ts';
import { orgCurrency } from '../organization/organization.repository.ts';
import { findPartPage, findPartStock, findPartWithTotals, hasStock, lockOwnedPart } from './parts.repository.ts';
import {
  partWire,
  UPDATABLE_PART_FIELDS,
  type CreatePartInput,
  type ListPartsInput,
  type UpdatePartInput,
} from './parts.schemas.ts';

const numberTaken = (number: string) =>
  conflict('part_number_taken', `Part number ${number} is already used in this organisation (any case)`);

const decimalOrNull = (n: number | null | undefined) => (n == null ? n : new Prisma.Decimal(toSql(dec(n))));

/** The columns of a create or a patch: money and quantities as exact decimals. */
function columnsOf(input: Partial<CreatePartInput>): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  for (const field of UPDATABLE_PART_FIELDS) {
    const v = input[field];
    if (v === undefined) continue;
    data[field] =
      field === 'unitCost' || field === 'reorderPoint' || field === 'reorderQuantity'
        ? decimalOrNull(v as number | null)
        : v;
  }
  return data;
}

export function createPartService({ db }: Pick<ServiceDeps, 'db'>) {
  return {
    async list(ctx: RequestContext, query: ListPartsInput) {
      const [{ parts, nextCursor }, currency] = await Promise.all([
        findPartPage(db.sql, ctx.orgId, query),
        orgCurrency(db.prisma, ctx.orgId),
      ]);
      return { ok: true as const, currency, parts: parts.map(partWire), nextCursor };
    },

    async get(ctx: RequestContext, id: string) {
      const part = await findPartWithTotals(db.sql, ctx.orgId, id);
      const [stock, currency] = await Promise.all([
        findPartStock(db.sql, ctx.orgId, id),
        orgCurrency(db.prisma, ctx.orgId),
      ]);
      return {
        ok: true as const,
        currency,
        part: {
          ...partWire(part),
          stock: stock.map((s) => ({
            yardId: s.yardId,
            onHand: toWire(dec(s.onHand), 4),
            value: toWire(dec(s.value), 2),
            atOrBelowReorderPoint: s.low,
          })),
        },
      };
    },

    async create(ctx: RequestContext, input: CreatePartInput) {
      try {
        const part = await transaction(db, (tx) =>
          tx.part.create({
            data: {
              ...(columnsOf(input) as Prisma.PartUncheckedCreateInput),
              orgId: ctx.orgId,
              number: input.number,
              name: input.name,
              trackInventory: input.trackInventory ?? true,
              createdById: ctx.actorId,
            },
          }),
        );
        return { ok: true as const, partId: part.id };
      } catch (err) {
        if (isUniqueViolation(err)) throw numberTaken(input.number);
        throw err;
      }
    },

    /** Switching trackInventory off is refused while a yard holds the part: its stock would lose its ledger. */
    async update(ctx: RequestContext, id: string, patch: UpdatePartInput) {
      if (!UPDATABLE_PART_FIELDS.some((f) => patch[f] !== undefined))
        throw new ValidationError(
          { body: `send at least one of: ${UPDATABLE_PART_FIELDS.join(', ')}` },
          'The patch is empty',
        );
      try {
        await transaction(db, async (tx) => {
          const part = await lockOwnedPart(tx, ctx.orgId, id);
          if (patch.trackInventory === false && part.trackInventory && (await hasStock(tx, ctx.orgId, id)))
            throw conflict(
              'part_has_stock',
              'Adjust the stock of every yard to zero before switching trackInventory off',
            );
          await tx.part.update({ where: { id }, data: columnsOf(patch) });
        });
      } catch (err) {
        if (isUniqueViolation(err) && patch.number) throw numberTaken(patch.number);
        throw err;
      }
      return { ok: true as const, partId: id };
    },

    /** Archiving hides the part from the default list; its stock, ledger and lines stay and can still move. */
    async archive(ctx: RequestContext, id: string) {
      return transaction(db, async (tx) => {
        const part = await lockOwnedPart(tx, ctx.orgId, id);
        const archivedAt =
          part.archivedAt ?? (await tx.part.update({ where: { id }, data: { archivedAt: new Date() } })).archivedAt!;
        return { ok: true as const, partId: id, archivedAt: archivedAt.toISOString() };
      });
    },
  };
}

export type PartService = ReturnType<typeof createPartService>;
