import { randomUUID } from 'node:crypto';
import type { SqlRunner } from '../../db/database.ts';
import type { Tx } from '../../db/transaction.ts';
import type { Vendor } from '../../generated/prisma/client.ts';
import { ValidationError } from '../../core/errors.ts';
import { keysetSql } from '../../core/pagination.ts';
import type { CreateVendorInput, ListVendorsInput } from './vendors.schemas.ts';

/** The vendor of the organisation (archived or not), or null: the reference check other modules build on. */
export function ownedVendor(tx: Tx, orgId: string, vendorId: string): Promise<Vendor | null> {
  return tx.vendor.findFirst({ where: { id: vendorId, orgId } });
}

/**
 * A vendorId sent by a client (a purchase order, a fuel entry, an expense): 422 on `field` when it names no vendor
 * of the organisation or an archived one. Null and omitted ids are not checked.
 */
export async function assertVendorReference(
  tx: Tx,
  orgId: string,
  vendorId: string | null | undefined,
  field = 'vendorId',
): Promise<void> {
  if (vendorId == null) return;
  const vendor = await ownedVendor(tx, orgId, vendorId);
  if (!vendor) throw new ValidationError({ [field]: 'no vendor with this id in your organisation' });
  if (vendor.archivedAt) throw new ValidationError({ [field]: 'this vendor is archived' });
}

/** Locks the vendor row until the transaction ends (a PATCH and an archive of it queue), or null. */
export async function lockOwnedVendor(tx: Tx, orgId: string, id: string): Promise<Vendor | null> {
  const locked = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM vendors WHERE id = ${id} AND "orgId" = ${orgId} FOR UPDATE`;
  return locked.length === 0 ? null : ownedVendor(tx, orgId, id);
}

/**
 * Inserts a vendor, or returns null when its name is taken. ON CONFLICT DO NOTHING on the partial unique index
 * (orgId, lower(name)) of vendors in use: a concurrent create with the same name waits for the first and then
 * reports the clash without aborting the caller's transaction.
 */
export async function insertVendor(tx: Tx, orgId: string, input: CreateVendorInput): Promise<Vendor | null> {
  const rows = await tx.$queryRaw<Vendor[]>`
    INSERT INTO vendors (id, "orgId", name, email, phone, address, "accountNumber", notes)
    VALUES (${randomUUID()}, ${orgId}, ${input.name}, ${input.email ?? null}, ${input.phone ?? null},
      ${input.address ?? null}, ${input.accountNumber ?? null}, ${input.notes ?? null})
    ON CONFLICT DO NOTHING
    RETURNING *`;
  return rows[0] ?? null;
}

/** True when another vendor in use already has this name, ignoring case. */
export async function nameTaken(tx: Tx, orgId: string, name: string, exceptId: string): Promise<boolean> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM vendors
    WHERE "orgId" = ${orgId} AND lower(name) = lower(${name}) AND "archivedAt" IS NULL AND id <> ${exceptId}
    LIMIT 1`;
  return rows.length > 0;
}

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** Alphabetical ignoring case, then id, on vendors(orgId, lower(name), id); the cursor is (lower(name), id). */
export function listVendors(
  sql: SqlRunner,
  orgId: string,
  query: ListVendorsInput,
  after: [string, string] | null,
): Promise<(Vendor & { nameKey: string })[]> {
  const params: unknown[] = [orgId];
  const where = ['"orgId" = $1', query.archived ? '"archivedAt" IS NOT NULL' : '"archivedAt" IS NULL'];
  if (query.q) {
    params.push(`%${escapeLike(query.q)}%`);
    const p = `$${params.length}`;
    where.push(`(name ILIKE ${p} OR email ILIKE ${p} OR "accountNumber" ILIKE ${p})`);
  }
  // The cursor carries the database's lower(name), not JavaScript's: the two differ for a few letters.
  const { text, params: bound } = keysetSql({
    from: 'vendors',
    select: '*, lower(name) AS "nameKey"',
    where,
    params,
    order: [{ column: 'lower(name)' }, { column: 'id' }],
    direction: 'asc',
    after,
    take: query.limit + 1,
  });
  return sql.query<Vendor & { nameKey: string }>(text, bound);
}
