import type { Prisma } from '../../generated/prisma/client.ts';
import { transaction } from '../../db/transaction.ts';
import type { RequestContext } from '../../core/context.ts';
import { conflict, notFound, ValidationError } from '../../core/errors.ts';
import { decodeCursor, paginate } from '../../core/pagination.ts';
import { isUniqueViolation } from '../shared/unique-violation.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import { insertVendor, listVendors, lockOwnedVendor, nameTaken, ownedVendor } from './vendors.repository.ts';
import {
  toVendorRow,
  UPDATABLE_VENDOR_FIELDS,
  type CreateVendorInput,
  type ListVendorsInput,
  type UpdateVendorInput,
} from './vendors.schemas.ts';

const nameTakenError = (name: string) =>
  conflict('vendor_name_taken', `A vendor named "${name}" already exists in this organisation`);

function nameCursor(cursor: (string | number | null)[] | null): [string, string] | null {
  if (!cursor) return null;
  const [name, id] = cursor;
  if (typeof name !== 'string' || typeof id !== 'string')
    throw new ValidationError({ cursor: 'is not a cursor returned by this endpoint' });
  return [name, id];
}

export function createVendorService({ db }: Pick<ServiceDeps, 'db'>) {
  return {
    async list(ctx: RequestContext, query: ListVendorsInput) {
      const rows = await listVendors(db.sql, ctx.orgId, query, nameCursor(decodeCursor(query.cursor, 2)));
      const { page, nextCursor } = paginate(rows, query.limit, (v) => [v.nameKey, v.id]);
      return { ok: true as const, vendors: page.map(toVendorRow), nextCursor };
    },

    async create(ctx: RequestContext, input: CreateVendorInput) {
      const vendor = await transaction(db, (tx) => insertVendor(tx, ctx.orgId, input));
      if (!vendor) throw nameTakenError(input.name);
      return { ok: true as const, vendorId: vendor.id };
    },

    async get(ctx: RequestContext, id: string) {
      const vendor = await ownedVendor(db.prisma, ctx.orgId, id);
      if (!vendor) throw notFound('Vendor');
      return { ok: true as const, vendor: toVendorRow(vendor) };
    },

    /** An archived vendor is frozen (409 vendor_archived): its orders keep it as it was. */
    async update(ctx: RequestContext, id: string, patch: UpdateVendorInput) {
      const fields = UPDATABLE_VENDOR_FIELDS.filter((f) => patch[f] !== undefined);
      if (fields.length === 0)
        throw new ValidationError(
          { body: `send at least one of: ${UPDATABLE_VENDOR_FIELDS.join(', ')}` },
          'The patch is empty',
        );
      try {
        await transaction(db, async (tx) => {
          const before = await lockOwnedVendor(tx, ctx.orgId, id);
          if (!before) throw notFound('Vendor');
          if (before.archivedAt) throw conflict('vendor_archived', 'This vendor is archived; it cannot be changed');
          if (patch.name && patch.name.toLowerCase() !== before.name.toLowerCase()) {
            if (await nameTaken(tx, ctx.orgId, patch.name, id)) throw nameTakenError(patch.name);
          }
          const data: Prisma.VendorUncheckedUpdateInput = {};
          for (const field of fields) (data as Record<string, unknown>)[field] = patch[field];
          await tx.vendor.update({ where: { id: before.id }, data });
        });
      } catch (err) {
        // Another request took the name between our check and our write.
        if (isUniqueViolation(err) && patch.name) throw nameTakenError(patch.name);
        throw err;
      }
      return { ok: true as const, vendorId: id };
    },

    /** DELETE archives: orders keep their vendor, the name is free again; a second DELETE answers the same. */
    async archive(ctx: RequestContext, id: string) {
      return transaction(db, async (tx) => {
        const vendor = await lockOwnedVendor(tx, ctx.orgId, id);
        if (!vendor) throw notFound('Vendor');
        const archivedAt = vendor.archivedAt ?? new Date();
        if (!vendor.archivedAt) await tx.vendor.update({ where: { id }, data: { archivedAt } });
        return { ok: true as const, vendorId: id, archivedAt: archivedAt.toISOString() };
      });
    },
  };
}

export type VendorService = ReturnType<typeof createVendorService>;
