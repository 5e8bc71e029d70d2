import { z } from 'zod';
import type { Vendor } from '../../generated/prisma/client.ts';
import { cursorQuery, dateTime, iso, limitQuery, optionalText, requiredText } from '../../core/schemas.ts';

const email = optionalText(320).refine(
  (s) => s == null || /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(s),
  'must be an email address',
);

const vendorFields = {
  email,
  phone: optionalText(50),
  address: optionalText(500),
  accountNumber: optionalText(100).describe('Your account number with this vendor'),
  notes: optionalText(5000),
};

export const CreateVendorBody = z
  .object({
    name: requiredText(200).describe(
      'Unique among the organisation’s vendors in use, ignoring case; an archived vendor frees its name',
    ),
    ...vendorFields,
  })
  .describe('Vendor fields; name is required; unknown fields are ignored');
export type CreateVendorInput = z.output<typeof CreateVendorBody>;

export const UPDATABLE_VENDOR_FIELDS = ['name', 'email', 'phone', 'address', 'accountNumber', 'notes'] as const;
export const UpdateVendorBody = z
  .object({ name: requiredText(200).optional(), ...vendorFields })
  .describe('Any subset of the vendor fields; null clears a nullable field; unknown fields are ignored')
  .meta({ minProperties: 1 });
export type UpdateVendorInput = z.output<typeof UpdateVendorBody>;

export const ListVendorsQuery = z.object({
  q: z.string().trim().max(200).optional().describe('Case-insensitive text in the name, email or account number'),
  archived: z
    .enum(['true', 'false'], { error: 'must be true or false' })
    .optional()
    .transform((v) => v === 'true')
    .describe('true lists archived vendors instead of the ones in use'),
  limit: limitQuery,
  cursor: cursorQuery,
});
export type ListVendorsInput = z.output<typeof ListVendorsQuery>;

// ---- responses

export const VendorRow = z
  .object({
    id: z.string(),
    name: z.string(),
    email: z.string().nullable(),
    phone: z.string().nullable(),
    address: z.string().nullable(),
    accountNumber: z.string().nullable(),
    notes: z.string().nullable(),
    archivedAt: dateTime().nullable().describe('Set once the vendor is archived (DELETE)'),
    createdAt: dateTime(),
    updatedAt: dateTime(),
  })
  .meta({ id: 'VendorRow' });

export const ListVendorsResponse = z.object({
  ok: z.literal(true),
  vendors: z.array(VendorRow),
  nextCursor: z.string().nullable(),
});
export const CreateVendorResponse = z.object({ ok: z.literal(true), vendorId: z.string() });
export const VendorIdResponse = z.object({ ok: z.literal(true), vendorId: z.string() });
export const VendorDetailResponse = z.object({ ok: z.literal(true), vendor: VendorRow });
export const ArchiveVendorResponse = z.object({ ok: z.literal(true), vendorId: z.string(), archivedAt: dateTime() });

export function toVendorRow(v: Vendor): z.input<typeof VendorRow> {
  return {
    id: v.id,
    name: v.name,
    email: v.email,
    phone: v.phone,
    address: v.address,
    accountNumber: v.accountNumber,
    notes: v.notes,
    archivedAt: iso(v.archivedAt),
    createdAt: v.createdAt.toISOString(),
    updatedAt: v.updatedAt.toISOString(),
  };
}
