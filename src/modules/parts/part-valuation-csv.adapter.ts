import { Readable } from 'node:stream';
import { csvCell } from '../shared/csv-cell.ts';
import { dec, toWire } from '../../core/money.ts';
import type { ValuationPageRow } from './part-inventory.repository.ts';

export const VALUATION_CSV_HEADER = 'partId,partNumber,partName,yardId,onHand,value';

const line = (r: ValuationPageRow) =>
  [
    r.partId,
    csvCell(r.partNumber),
    csvCell(r.partName),
    r.yardId,
    dec(r.onHand).toFixed(),
    toWire(dec(r.value), 2).toFixed(2),
  ].join(',') + '\r\n';

/**
 * The header, then every row with stock, read one keyset page at a time as the client takes them (Readable.from
 * pulls on demand), so memory stays flat whatever the organisation's size.
 */
export function valuationCsvStream(
  nextPage: (cursor: string | undefined) => Promise<{ rows: ValuationPageRow[]; nextCursor: string | null }>,
): Readable {
  async function* lines() {
    yield `${VALUATION_CSV_HEADER}\r\n`;
    let cursor: string | undefined;
    do {
      const page = await nextPage(cursor);
      if (page.rows.length) yield page.rows.map(line).join('');
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }
  return Readable.from(lines());
}

export const valuationCsvFileName = (now = new Date()) => `inventory-valuation-${now.toISOString().slice(0, 10)}.csv`;
