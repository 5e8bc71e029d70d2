// A row of cells becomes the values of a type's fields: each field has a kind that says how its text is read
// (import-values.rules.ts). Pure: the first unreadable cell is the row's error.
import type { ImportOptionsInput } from './imports.schemas.ts';
import { CellError, parseDate, parseDecimal, parseInteger, parseNumber } from './import-values.rules.ts';

export type FieldKind = 'text' | 'number' | 'integer' | 'decimal' | 'date' | 'upper' | 'boolean' | 'list';

export interface FieldSpec {
  name: string;
  kind: FieldKind;
  /** An updatable field: a cell holding options.clearValue clears it (null, or [] for a list). */
  clearable?: boolean;
}

export interface RowError {
  code: string;
  column: string | null;
  value: string | null;
  message: string;
}

export interface ReadRow {
  values: Record<string, unknown>;
  error: RowError | null;
}

/** Settled options: every default applied. */
export interface Settings {
  delimiter: string | null;
  decimal: '.' | ',';
  dateFormat: NonNullable<ImportOptionsInput['dateFormat']>;
  timezone: string;
  match: NonNullable<ImportOptionsInput['match']>;
  onError: NonNullable<ImportOptionsInput['onError']>;
  fuelProducts: string[] | null;
  clearValue: string | null;
}

export function settle(o: ImportOptionsInput): Settings {
  return {
    delimiter: o.delimiter ?? null,
    decimal: o.decimal ?? '.',
    dateFormat: o.dateFormat ?? 'iso',
    timezone: o.timezone ?? 'UTC',
    match: o.match ?? 'customerAssetNumber',
    onError: o.onError ?? 'reject_all',
    fuelProducts: o.fuelProducts ?? null,
    clearValue: o.clearValue ?? null,
  };
}

const TRUE = new Set(['true', 'yes', 'y', '1', 'x']);
const FALSE = new Set(['false', 'no', 'n', '0']);

function readCell(text: string, kind: FieldKind, s: Settings): unknown {
  switch (kind) {
    case 'text':
      return text.trim();
    case 'upper':
      return text.trim().toUpperCase();
    case 'number':
      return parseNumber(text, s.decimal);
    case 'integer':
      return parseInteger(text, s.decimal);
    case 'decimal':
      return parseDecimal(text, s.decimal);
    case 'date':
      return parseDate(text, s.dateFormat, s.timezone).toISOString();
    case 'list':
      // Line breaks, `,` `;` and `|` separate items whatever the file's delimiter; a space is part of an item, as
      // a card number the API stored with spaces must read back whole.
      return [
        ...new Set(
          text
            .split(/[\r\n,;|]+/)
            .map((v) => v.trim())
            .filter((v) => v !== ''),
        ),
      ];
    case 'boolean': {
      const v = text.trim().toLowerCase();
      if (TRUE.has(v)) return true;
      if (FALSE.has(v)) return false;
      throw new CellError('invalid_value', `"${text}" is not yes or no`);
    }
  }
}

/** Whether a cell holds the clear marker: its whole trimmed text, compared without case. */
const isClear = (text: string, s: Settings) =>
  s.clearValue !== null && text.trim().toLowerCase() === s.clearValue.toLowerCase();

/**
 * The values of one record. Empty cells give no value (the field is left as it is); a cell holding the clear
 * marker clears an updatable field and is refused on any other. Cells past the header's columns are refused unless
 * empty (a trailing delimiter).
 */
export function readRow(
  cells: readonly string[],
  headers: readonly string[],
  columns: ReadonlyMap<string, number>,
  specs: readonly FieldSpec[],
  s: Settings,
): ReadRow {
  const values: Record<string, unknown> = {};
  for (let i = headers.length; i < cells.length; i++) {
    if (cells[i]!.trim() !== '')
      return {
        values,
        error: {
          code: 'too_many_columns',
          column: null,
          value: cells[i]!,
          message: `the row has ${cells.length} cells; the header has ${headers.length} columns`,
        },
      };
  }
  for (const spec of specs) {
    const index = columns.get(spec.name);
    if (index === undefined) continue;
    const text = cells[index] ?? '';
    if (text.trim() === '') continue;
    if (isClear(text, s)) {
      if (!spec.clearable)
        return {
          values,
          error: {
            code: 'not_clearable',
            column: headers[index] ?? spec.name,
            value: text,
            message: `${spec.name} is not a field an import can clear`,
          },
        };
      values[spec.name] = spec.kind === 'list' ? [] : null;
      continue;
    }
    try {
      values[spec.name] = readCell(text, spec.kind, s);
    } catch (err) {
      if (!(err instanceof CellError)) throw err;
      return {
        values,
        error: { code: err.code, column: headers[index] ?? spec.name, value: text, message: err.message },
      };
    }
  }
  return { values, error: null };
}

/** Wire form of a record's fields before an update (dates as ISO text, decimals as numbers), for rollback. */
export function priorOf(record: object, fields: readonly string[]) {
  const prior: Record<string, unknown> = {};
  for (const f of fields) {
    const v = (record as Record<string, unknown>)[f];
    prior[f] = v instanceof Date ? v.toISOString() : v !== null && typeof v === 'object' ? Number(String(v)) : v;
  }
  return prior;
}
