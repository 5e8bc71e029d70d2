import { z } from 'zod';
import type { Organization } from '../../generated/prisma/client.ts';
import { dateTime, okTrue } from '../../core/schemas.ts';

/** The ISO 4217 codes the runtime knows (Node 20's ICU list: current codes, no funds or metals of the past). */
const CURRENCIES: ReadonlySet<string> = new Set(Intl.supportedValuesOf('currency'));

export const COST_METHODS = ['FIFO', 'AVERAGE'] as const;

export const currencyCode = () =>
  z
    .string({ error: (i) => (i.input === undefined ? 'is required' : 'must be a string') })
    .regex(/^[A-Z]{3}$/, 'must be a 3-letter upper-case ISO 4217 code')
    .refine((c) => CURRENCIES.has(c), 'is not an ISO 4217 currency code')
    .describe('ISO 4217 currency code, upper case (USD, EUR, GBP, ...)');

export const UpdateOrganizationBody = z
  .object({
    currency: currencyCode().optional(),
    inventoryCostMethod: z
      .enum(COST_METHODS)
      .optional()
      .describe(
        'FIFO or AVERAGE. Switching with stock on hand keeps every shelf value: to AVERAGE merges the cost layers of each part and yard into one; to FIFO starts from that layer',
      ),
  })
  .describe('Any subset of the organisation settings; unknown fields are ignored')
  .meta({ minProperties: 1 });
export type UpdateOrganizationInput = z.output<typeof UpdateOrganizationBody>;

export const OrganizationRow = z
  .object({
    id: z.string(),
    name: z.string(),
    slug: z.string(),
    currency: z.string().describe('ISO 4217 code of every money amount'),
    inventoryCostMethod: z.enum(COST_METHODS),
    createdAt: dateTime(),
  })
  .meta({ id: 'Organization' });

export const OrganizationResponse = z.object({ ok: okTrue, organization: OrganizationRow });

export const organizationWire = (o: Organization): z.output<typeof OrganizationRow> => ({
  id: o.id,
  name: o.name,
  slug: o.slug,
  currency: o.currency,
  inventoryCostMethod: o.inventoryCostMethod,
  createdAt: o.createdAt.toISOString(),
});
