// How the text of a cell becomes a value: numbers under the declared decimal mark, dates under the declared format
// and time zone, header names matched to fields. Pure functions; a refusal is a CellError with its code.

export type DecimalMark = '.' | ',';
export type DateFormat = 'iso' | 'dd/mm/yyyy' | 'mm/dd/yyyy' | 'yyyy-mm-dd hh:mm';

export class CellError extends Error {
  constructor(
    readonly code: 'invalid_number' | 'invalid_date' | 'date_out_of_range' | 'invalid_value',
    message: string,
  ) {
    super(message);
  }
}

/** The earliest and latest years a date may have: 1900-01-01 is a spreadsheet's empty date, never a real one. */
export const MIN_YEAR = 1901;
export const MAX_YEAR = 2100;

const GROUPED = { '.': /^\d{1,3}(,\d{3})+(\.\d+)?$/, ',': /^\d{1,3}([. \u00a0\u202f]\d{3})+(,\d+)?$/ } as const;
const PLAIN = { '.': /^\d+(\.\d+)?$/, ',': /^\d+(,\d+)?$/ } as const;

/**
 * A number written with the declared decimal mark, optionally with thousands separators in groups of three
 * (`1,234.5` or `1.234,5` / `1 234,5`); anything else (`1,5` when the mark is `.`, `1.2.3`) is refused, never
 * guessed. The text is returned normalised (`1234.5`) so that exact decimals stay exact.
 */
export function parseDecimal(text: string, mark: DecimalMark): string {
  let s = text.trim();
  let sign = '';
  if (s.startsWith('-') || s.startsWith('+')) {
    sign = s[0] === '-' ? '-' : '';
    s = s.slice(1);
  }
  let digits: string | null = null;
  if (PLAIN[mark].test(s)) digits = s;
  else if (GROUPED[mark].test(s)) digits = s.replace(mark === '.' ? /,/g : /[. \u00a0\u202f]/g, '');
  if (digits === null)
    throw new CellError(
      'invalid_number',
      `"${text}" is not a number with "${mark}" as the decimal mark (thousands separators only in groups of three)`,
    );
  return sign + (mark === ',' ? digits.replace(',', '.') : digits);
}

export function parseNumber(text: string, mark: DecimalMark): number {
  return Number(parseDecimal(text, mark));
}

export function parseInteger(text: string, mark: DecimalMark): number {
  const n = parseNumber(text, mark);
  if (!Number.isInteger(n)) throw new CellError('invalid_number', `"${text}" is not a whole number`);
  return n;
}

const PATTERNS: Record<DateFormat, RegExp> = {
  iso: /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3})\d*)?)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i,
  'dd/mm/yyyy': /^(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2}))?)?$/,
  'mm/dd/yyyy': /^(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2}))?)?$/,
  'yyyy-mm-dd hh:mm': /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2}))?)?$/,
};

/** Milliseconds to add to a UTC wall time to get the zone's wall time at that instant. */
function zoneOffset(zone: string, utcMs: number): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(utcMs));
  const get = (t: string) => Number(parts.find((p) => p.type === t)?.value);
  return Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second')) - utcMs;
}

export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/**
 * A date (or date and time) in the declared format; without an offset it is a wall time in `zone`. Impossible
 * calendar dates (31/02) are refused, never rolled into the next month; years outside MIN_YEAR..MAX_YEAR too.
 */
export function parseDate(text: string, format: DateFormat, zone: string): Date {
  const s = text.trim();
  const m = PATTERNS[format].exec(s);
  if (!m) throw new CellError('invalid_date', `"${text}" is not a date in the format ${format}`);
  let y: number, mo: number, d: number;
  if (format === 'dd/mm/yyyy') [d, mo, y] = [Number(m[1]), Number(m[2]), Number(m[3])];
  else if (format === 'mm/dd/yyyy') [mo, d, y] = [Number(m[1]), Number(m[2]), Number(m[3])];
  else [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const [h, mi, sec] = [Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0)];
  const ms = format === 'iso' ? Number((m[7] ?? '0').padEnd(3, '0')) : 0;
  const wall = Date.UTC(y, mo - 1, d, h, mi, sec, ms);
  const check = new Date(wall);
  if (
    mo < 1 ||
    mo > 12 ||
    check.getUTCFullYear() !== y ||
    check.getUTCMonth() !== mo - 1 ||
    check.getUTCDate() !== d ||
    h > 23 ||
    mi > 59 ||
    sec > 59
  )
    throw new CellError('invalid_date', `"${text}" is not a calendar date`);
  if (y < MIN_YEAR || y > MAX_YEAR)
    throw new CellError('date_out_of_range', `"${text}" is outside the years ${MIN_YEAR} to ${MAX_YEAR}`);
  const offsetText = format === 'iso' ? m[8] : undefined;
  if (offsetText) {
    if (offsetText.toUpperCase() === 'Z') return check;
    const sign = offsetText.startsWith('-') ? -1 : 1;
    const digits = offsetText.slice(1).replace(':', '');
    return new Date(wall - sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2))) * 60_000);
  }
  if (zone === 'UTC') return check;
  // The instant whose wall time in the zone is the one written (the offset of a DST change settles on a retry).
  let utc = wall - zoneOffset(zone, wall);
  utc = wall - zoneOffset(zone, utc);
  return new Date(utc);
}

/** Header and field names compare without case, spaces, underscores or hyphens ("Asset Number" = assetNumber). */
export const headerKey = (name: string) => name.toLowerCase().replace(/[\s_-]+/g, '');

/**
 * Which field each column feeds: the mapping's entries first (header → field, null or "" ignores a column), then
 * headers named like a field. Returns the column index of each field.
 */
export function mapColumns(
  headers: string[],
  fields: readonly string[],
  mapping: Record<string, string | null>,
): Map<string, number> {
  const byKey = new Map(fields.map((f) => [headerKey(f), f]));
  const mappedByKey = new Map(Object.entries(mapping).map(([h, f]) => [headerKey(h), f]));
  const out = new Map<string, number>();
  headers.forEach((header, index) => {
    const key = headerKey(header);
    if (key === '') return;
    const target = mappedByKey.has(key) ? mappedByKey.get(key) : byKey.get(key);
    if (!target) return;
    const field = byKey.get(headerKey(target));
    if (field && !out.has(field)) out.set(field, index);
  });
  return out;
}

/** The delimiter of a header line: the most frequent of `,` `;` tab `|` outside quotes (`,` when none). */
export function detectDelimiter(line: string): string {
  const counts = new Map<string, number>([
    [',', 0],
    [';', 0],
    ['\t', 0],
    ['|', 0],
  ]);
  let quoted = false;
  for (const ch of line) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && counts.has(ch)) counts.set(ch, counts.get(ch)! + 1);
  }
  let best = ',';
  for (const [d, n] of counts) if (n > counts.get(best)!) best = d;
  return best;
}
