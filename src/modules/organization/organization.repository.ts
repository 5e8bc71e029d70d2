import type { Tx } from '../../db/transaction.ts';
import type { InventoryCostMethod } from '../../generated/prisma/client.ts';
import { notFound } from '../../core/errors.ts';

/** The ISO 4217 code every amount of the organisation is in (reports and costed responses name it once). */
export async function orgCurrency(tx: Tx, orgId: string): Promise<string> {
  const rows = await tx.$queryRaw<{ currency: string }[]>`SELECT "currency" FROM "organizations" WHERE "id" = ${orgId}`;
  if (!rows[0]) throw notFound('Organization');
  return rows[0].currency;
}

/** The organisation's inventory cost method (FIFO or AVERAGE). */
export async function orgCostMethod(tx: Tx, orgId: string): Promise<InventoryCostMethod> {
  const rows = await tx.$queryRaw<{ method: InventoryCostMethod }[]>`
    SELECT "inventoryCostMethod" AS "method" FROM "organizations" WHERE "id" = ${orgId}`;
  if (!rows[0]) throw notFound('Organization');
  return rows[0].method;
}
