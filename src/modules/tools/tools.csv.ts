import { Readable } from 'node:stream';
import type { Tool } from '../../generated/prisma/client.ts';

/** The 22 CSV columns, in order. Stable: new columns are only ever appended in a new API version. */
export const TOOL_CSV_COLUMNS: [string, (t: Tool) => string | number | boolean | null][] = [
  ['id', (t) => t.id],
  ['name', (t) => t.name],
  ['category', (t) => t.category],
  ['makeModel', (t) => t.makeModel],
  ['serial', (t) => t.serial],
  ['status', (t) => t.status],
  ['isConsumable', (t) => t.isConsumable],
  ['stockLevel', (t) => t.stockLevel],
  ['minStockLevel', (t) => t.minStockLevel],
  ['parentKitId', (t) => t.parentKitId],
  ['assignedUserId', (t) => t.assignedUserId],
  ['assignedVehicleId', (t) => t.assignedVehicleId],
  ['assignedYardId', (t) => t.assignedYardId],
  ['checkedOutToUserId', (t) => t.checkedOutToUserId],
  ['checkedOutAt', (t) => t.checkedOutAt?.toISOString() ?? null],
  ['purchaseDate', (t) => t.purchaseDate?.toISOString() ?? null],
  ['purchaseCost', (t) => t.purchaseCost],
  ['supplier', (t) => t.supplier],
  ['warrantyEndDate', (t) => t.warrantyEndDate?.toISOString() ?? null],
  ['pmIntervalDays', (t) => t.pmIntervalDays],
  ['lastServicedAt', (t) => t.lastServicedAt?.toISOString() ?? null],
  ['createdAt', (t) => t.createdAt.toISOString()],
];

/** A spreadsheet would run a cell starting with one of these as a formula (CSV injection). */
const FORMULA_START = /^[=+\-@\t\r]/;

/** One RFC 4180 field: formula-like text neutralised with a leading quote, then quoted when needed. */
export function csvCell(value: string | number | boolean | null): string {
  if (value === null) return '';
  let text = String(value);
  if (typeof value === 'string' && FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) || text !== text.trim() ? `"${text.replace(/"/g, '""')}"` : text;
}

const line = (cells: string[]) => `${cells.join(',')}\r\n`;

/**
 * Streams the header and then every row, asking `nextPage` for one page at a time until its cursor
 * runs out; the reply starts before the last page is read.
 */
export function toolCsvStream(nextPage: (cursor: string | undefined) => Promise<{ tools: Tool[]; nextCursor: string | null }>): Readable {
  async function* rows() {
    yield line(TOOL_CSV_COLUMNS.map(([name]) => name));
    let cursor: string | undefined;
    do {
      const page = await nextPage(cursor);
      if (page.tools.length > 0) yield page.tools.map((t) => line(TOOL_CSV_COLUMNS.map(([, cell]) => csvCell(cell(t))))).join('');
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }
  return Readable.from(rows());
}

export const csvFileName = (now = new Date()) => `service-tools-${now.toISOString().slice(0, 10)}.csv`;
