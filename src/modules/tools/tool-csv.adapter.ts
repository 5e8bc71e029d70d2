import { Readable } from 'node:stream';

type CellKind = 'text' | 'plain' | 'time' | 'float';

/**
 * The 22 CSV columns, in order, with how each is written. Stable: new columns are only ever appended in a
 * new API version. text: free text (formula guard, RFC 4180 quoting); plain: ids, enums, booleans and
 * integers (never need either); time: ISO 8601 UTC with milliseconds; float: JavaScript's number format.
 */
export const TOOL_CSV_COLUMNS: [string, CellKind][] = [
  ['id', 'plain'],
  ['name', 'text'],
  ['category', 'text'],
  ['makeModel', 'text'],
  ['serial', 'text'],
  ['status', 'plain'],
  ['isConsumable', 'plain'],
  ['stockLevel', 'plain'],
  ['minStockLevel', 'plain'],
  ['parentKitId', 'plain'],
  ['assignedUserId', 'plain'],
  ['assignedVehicleId', 'plain'],
  ['assignedYardId', 'plain'],
  ['checkedOutToUserId', 'plain'],
  ['checkedOutAt', 'time'],
  ['purchaseDate', 'time'],
  ['purchaseCost', 'float'],
  ['supplier', 'text'],
  ['warrantyEndDate', 'time'],
  ['pmIntervalDays', 'plain'],
  ['lastServicedAt', 'time'],
  ['createdAt', 'time'],
];

/** A spreadsheet would run a cell starting with one of these as a formula (CSV injection). */
const FORMULA_START = /^[=+\-@\t\r]/;
/** What String.prototype.trim() removes: a cell starting or ending with one is quoted to keep it. */
const TRIMMED = ' \\t\\n\\v\\f\\r\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';

/** One RFC 4180 field: formula-like text neutralised with a leading quote, then quoted when needed. */
export function csvCell(value: string | number | boolean | null): string {
  if (value === null) return '';
  let text = String(value);
  if (typeof value === 'string' && FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) || text !== text.trim() ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * csvCell() in SQL, so PostgreSQL writes the CSV and the driver parses one text per row instead of 22
 * typed columns (that parsing was most of the export's time). The regular expressions are csvCell's.
 */
function cellSql(column: string, kind: CellKind): string {
  const c = `"${column}"`;
  if (kind === 'plain') return `COALESCE(${c}::text, '')`;
  if (kind === 'time') return `COALESCE(to_char(${c} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), '')`;
  if (kind === 'float') throw new Error('float cells are written by JavaScript');
  const guarded = `(CASE WHEN ${c} ~ E'^[-=+@\\t\\r]' THEN '''' || ${c} ELSE ${c} END)`;
  return `CASE WHEN ${c} IS NULL THEN '' WHEN ${guarded} ~ E'[",\\r\\n]|^[${TRIMMED}]|[${TRIMMED}]$'
    THEN '"' || replace(${guarded}, '"', '""') || '"' ELSE ${guarded} END`;
}

const joined = (cols: [string, CellKind][]) => cols.map(([name, kind]) => cellSql(name, kind)).join(` || ',' || `);
const floatAt = TOOL_CSV_COLUMNS.findIndex(([, kind]) => kind === 'float');

/**
 * The select list of a CSV page: the cells before and after purchaseCost as two texts, and purchaseCost
 * itself, which JavaScript formats (PostgreSQL writes large and tiny floats in another notation).
 */
export const TOOL_CSV_SELECT = `${joined(TOOL_CSV_COLUMNS.slice(0, floatAt))} AS "csvHead", "${TOOL_CSV_COLUMNS[floatAt][0]}" AS "csvFloat",
  ${joined(TOOL_CSV_COLUMNS.slice(floatAt + 1))} AS "csvTail"`;

export interface CsvRow {
  csvHead: string;
  csvFloat: number | null;
  csvTail: string;
}

export const csvLines = (rows: CsvRow[]) =>
  rows.map((r) => `${r.csvHead},${csvCell(r.csvFloat)},${r.csvTail}\r\n`).join('');

/**
 * Streams the header and then every row, asking `nextPage` for one page of lines at a time until its
 * cursor runs out; the reply starts before the last page is read, and the next page is read only when
 * the client has taken the previous one (Readable.from pulls on demand), so memory stays flat.
 */
export function toolCsvStream(
  nextPage: (cursor: string | undefined) => Promise<{ lines: string; nextCursor: string | null }>,
): Readable {
  async function* rows() {
    yield `${TOOL_CSV_COLUMNS.map(([name]) => name).join(',')}\r\n`;
    let cursor: string | undefined;
    do {
      const page = await nextPage(cursor);
      if (page.lines) yield page.lines;
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }
  return Readable.from(rows());
}

export const csvFileName = (now = new Date()) => `service-tools-${now.toISOString().slice(0, 10)}.csv`;
