// Vendors imported: rows match vendors in use by name (without case); the vendors module's own insert.
import type { Vendor } from '../../generated/prisma/client.ts';
import { insertVendor, lockOwnedVendor } from '../vendors/vendors.repository.ts';
import { CreateVendorBody, UPDATABLE_VENDOR_FIELDS, UpdateVendorBody } from '../vendors/vendors.schemas.ts';
import { recordImport } from './import-records.operations.ts';

export const vendorImport = recordImport({
  scope: 'purchasing:write',
  fields: ['name', 'email', 'phone', 'address', 'accountNumber', 'notes'].map((name) => ({ name, kind: 'text' })),
  keyFields: ['name'],
  async find(db, orgId, keys) {
    const names = [...new Set(keys.map((k) => k.value.toLowerCase()))];
    if (names.length === 0) return [];
    const rows = await db.prisma.$queryRawUnsafe<{ id: string }[]>(
      `SELECT id FROM vendors WHERE "orgId" = $1 AND lower(name) = ANY($2::text[]) AND "archivedAt" IS NULL`,
      orgId,
      names,
    );
    const vendors = await db.prisma.vendor.findMany({ where: { orgId, id: { in: rows.map((r) => r.id) } } });
    return vendors.map((record) => ({ record, key: `name:${record.name.toLowerCase()}` }));
  },
  create: CreateVendorBody,
  update: UpdateVendorBody,
  updatable: UPDATABLE_VENDOR_FIELDS,
  changed: (before: Vendor, patch) =>
    UPDATABLE_VENDOR_FIELDS.filter((f) => patch[f] !== undefined && patch[f] !== before[f]),
  frozen: (before) => (before.archivedAt ? 'the vendor is archived' : null),
  insert: (tx, ctx, input) => insertVendor(tx, ctx.orgId, input),
  lock: (tx, orgId, id) => lockOwnedVendor(tx, orgId, id),
  async apply(tx, _ctx, before, patch) {
    const data: Record<string, unknown> = {};
    for (const f of UPDATABLE_VENDOR_FIELDS) if (patch[f] !== undefined && patch[f] !== before[f]) data[f] = patch[f];
    if (Object.keys(data).length === 0) return null;
    return tx.vendor.update({ where: { id: before.id }, data });
  },
  async remove(tx, orgId, id) {
    await tx.vendor.deleteMany({ where: { id, orgId } });
  },
});
