import { z } from 'zod';

/** The storeroom: stock of parts per yard. */
const id = z.string();
const at = z.iso.datetime({ offset: true });

export const inventoryEvents = {
  'part.low_stock': {
    summary:
      "A stock movement takes a part's stock in a yard from above its reorder point to at or below it (once per crossing).",
    data: z.object({
      partId: id,
      yardId: id,
      onHand: z.number().describe('Stock in the yard after the movement'),
      reorderPoint: z.number(),
      entryId: id.describe('The ledger entry of the movement'),
      at,
    }),
  },
};
