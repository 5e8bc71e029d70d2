/** A spreadsheet would run a cell starting with one of these as a formula (CSV injection). */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One RFC 4180 field of every CSV export: formula-like text neutralised with a leading quote, then quoted when
 * needed. A number's or a boolean's text (digits, sign, point, exponent; true/false) never needs either.
 */
export function csvCell(value: string | number | boolean | null | undefined): string {
  if (value == null) return '';
  if (typeof value !== 'string') return String(value);
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) || text !== text.trim() ? `"${text.replace(/"/g, '""')}"` : text;
}
