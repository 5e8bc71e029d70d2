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

/** What String.prototype.trim() removes: a cell starting or ending with one is quoted to keep it. */
const TRIMMED = ' \\t\\n\\v\\f\\r\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';

/**
 * csvCell() (shared/csv-cell.ts) in SQL, so PostgreSQL writes the CSV and the driver parses one text per row
 * instead of 22 typed columns (that parsing was most of the export's time). The regular expressions are csvCell's.
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

/** purchaseCost's cell: a number never needs the text rules (no quote, comma or space; no formula guard). */
const floatCell = (value: number | null) => (value === null ? '' : String(value));

/** The page's lines, built by appending (no array of per-row strings to join). */
export function csvLines(rows: readonly CsvRow[]): string {
  let out = '';
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    out += r.csvHead + ',' + floatCell(r.csvFloat) + ',' + r.csvTail + '\r\n';
  }
  return out;
}

type CsvPage = { lines: string; nextCursor: string | null };

/** Bytes buffered before the stream stops asking for pages: a little over one page of 5,000 rows. */
const HIGH_WATER_MARK = 1024 * 1024;

/**
 * Streams the header and then every row, one page of lines per chunk, asking `nextPage` for the page after the
 * one it hands over while that one is being sent: the database and the client work at once, and no more than
 * one page is read ahead of what the client has taken (a byte stream: it asks for more only once its buffer is
 * below HIGH_WATER_MARK), so memory stays flat however slowly the client reads.
 */
export function toolCsvStream(nextPage: (cursor: string | undefined) => Promise<CsvPage>): Readable {
  let ahead: Promise<CsvPage> | null = null;
  let reading = false;
  let started = false;
  const fetchPage = (cursor: string | undefined) => {
    const page = nextPage(cursor);
    // Awaited by the next read(); a client that leaves first must not turn its failure into an unhandled one.
    page.catch(() => {});
    return page;
  };
  const stream = new Readable({
    highWaterMark: HIGH_WATER_MARK,
    read() {
      if (reading) return;
      reading = true;
      if (!started) {
        started = true;
        ahead = fetchPage(undefined);
        this.push(`${TOOL_CSV_COLUMNS.map(([name]) => name).join(',')}\r\n`);
      }
      pump().catch((err: Error) => stream.destroy(err));
    },
  });
  async function pump() {
    for (;;) {
      const page = await ahead!;
      if (stream.destroyed) return;
      ahead = page.nextCursor ? fetchPage(page.nextCursor) : null;
      const more = page.lines ? stream.push(page.lines) : true;
      if (!ahead) {
        stream.push(null);
        return;
      }
      if (!more) break;
    }
    reading = false;
  }
  return stream;
}

export const csvFileName = (now = new Date()) => `service-tools-${now.toISOString().slice(0, 10)}.csv`;
