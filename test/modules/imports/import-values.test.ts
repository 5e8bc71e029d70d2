import { describe, expect, it } from 'vitest';
import {
  CellError,
  detectDelimiter,
  mapColumns,
  parseDate,
  parseDecimal,
} from '../../../src/modules/imports/import-values.rules.ts';

const refused = (fn: () => unknown, code: string) => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(CellError);
    expect((err as CellError).code).toBe(code);
    return;
  }
  throw new Error('was not refused');
};

describe('numbers', () => {
  it('reads thousands separators in groups of three exactly, or refuses', () => {
    expect(parseDecimal('12,500.50', '.')).toBe('12500.50');
    expect(parseDecimal('1,234', '.')).toBe('1234');
    expect(parseDecimal('1.234,5', ',')).toBe('1234.5');
    expect(parseDecimal('1 234,5', ',')).toBe('1234.5');
    expect(parseDecimal('1\u00a0234', ',')).toBe('1234');
    expect(parseDecimal('-3,25', ',')).toBe('-3.25');
    expect(parseDecimal(' 42 ', '.')).toBe('42');
    // Ambiguous or malformed under the declared mark: refused, never misread.
    refused(() => parseDecimal('1,5', '.'), 'invalid_number');
    refused(() => parseDecimal('1.5', ','), 'invalid_number');
    refused(() => parseDecimal('12,50', '.'), 'invalid_number');
    refused(() => parseDecimal('1,2345.6', '.'), 'invalid_number');
    refused(() => parseDecimal('1.2.3', '.'), 'invalid_number');
    refused(() => parseDecimal('12 500', '.'), 'invalid_number');
    refused(() => parseDecimal('$12', '.'), 'invalid_number');
  });
});

describe('dates', () => {
  it('reads each format, in the zone given for dates without an offset', () => {
    expect(parseDate('2026-03-01', 'iso', 'UTC').toISOString()).toBe('2026-03-01T00:00:00.000Z');
    expect(parseDate('2026-03-01T10:00:00+02:00', 'iso', 'UTC').toISOString()).toBe('2026-03-01T08:00:00.000Z');
    expect(parseDate('31/12/2025', 'dd/mm/yyyy', 'UTC').toISOString()).toBe('2025-12-31T00:00:00.000Z');
    expect(parseDate('12/31/2025 14:30', 'mm/dd/yyyy', 'UTC').toISOString()).toBe('2025-12-31T14:30:00.000Z');
    expect(parseDate('2026-07-01 08:00', 'yyyy-mm-dd hh:mm', 'Europe/Paris').toISOString()).toBe(
      '2026-07-01T06:00:00.000Z',
    );
    expect(parseDate('2026-01-15 08:00', 'yyyy-mm-dd hh:mm', 'America/New_York').toISOString()).toBe(
      '2026-01-15T13:00:00.000Z',
    );
  });

  it('never rolls 31/02 into March, and refuses 1900-01-01', () => {
    refused(() => parseDate('31/02/2026', 'dd/mm/yyyy', 'UTC'), 'invalid_date');
    refused(() => parseDate('2026-02-29', 'iso', 'UTC'), 'invalid_date');
    refused(() => parseDate('13/13/2026', 'mm/dd/yyyy', 'UTC'), 'invalid_date');
    refused(() => parseDate('2026-01-01 24:00', 'yyyy-mm-dd hh:mm', 'UTC'), 'invalid_date');
    refused(() => parseDate('1900-01-01', 'iso', 'UTC'), 'date_out_of_range');
    refused(() => parseDate('01/02/2026', 'iso', 'UTC'), 'invalid_date');
    expect(parseDate('2028-02-29', 'iso', 'UTC').toISOString()).toBe('2028-02-29T00:00:00.000Z');
  });
});

describe('headers and delimiters', () => {
  it('matches headers to fields without case, spaces or underscores; the mapping wins', () => {
    const fields = ['customerAssetNumber', 'nickname', 'assetClass'];
    const cols = mapColumns(['Customer Asset Number', 'NICK_NAME', 'Class', ''], fields, { Class: 'assetClass' });
    expect([...cols]).toEqual([
      ['customerAssetNumber', 0],
      ['nickname', 1],
      ['assetClass', 2],
    ]);
    expect(mapColumns(['nickname'], fields, { nickname: null }).size).toBe(0);
  });

  it('detects the delimiter from the header line, quotes aside', () => {
    expect(detectDelimiter('a;b;c')).toBe(';');
    expect(detectDelimiter('a\tb\tc')).toBe('\t');
    expect(detectDelimiter('"a;b",c,d')).toBe(',');
    expect(detectDelimiter('a|b')).toBe('|');
    expect(detectDelimiter('single')).toBe(',');
  });
});
