import { describe, expect, it } from 'vitest';
import { readRow, settle, type FieldSpec } from '../../../src/modules/imports/import-fields.rules.ts';

const specs: FieldSpec[] = [
  { name: 'name', kind: 'text', clearable: true },
  { name: 'cards', kind: 'list', clearable: true },
  { name: 'kind', kind: 'upper' },
];
const headers = ['Name', 'Cards', 'Kind'];
const columns = new Map([
  ['name', 0],
  ['cards', 1],
  ['kind', 2],
]);
const read = (cells: string[], clearValue?: string) => readRow(cells, headers, columns, specs, settle({ clearValue }));

describe('readRow', () => {
  it('leaves a field of an empty cell; clears an updatable one on the marker (trimmed, any case)', () => {
    expect(read(['', ' ', ''], '#clear')).toEqual({ values: {}, error: null });
    expect(read([' #Clear ', '#CLEAR', ''], '#clear')).toEqual({ values: { name: null, cards: [] }, error: null });
    expect(read(['#clear', '', ''])).toEqual({ values: { name: '#clear' }, error: null });
    expect(read(['#clear x', '', ''], '#clear').values).toEqual({ name: '#clear x' });
  });

  it('refuses the marker on a field that is not updatable', () => {
    expect(read(['A', '', '#clear'], '#clear').error).toEqual({
      code: 'not_clearable',
      column: 'Kind',
      value: '#clear',
      message: 'kind is not a field an import can clear',
    });
  });

  it('reads a list separated by line breaks, commas, semicolons or bars, once each, spaces inside an item kept', () => {
    expect(read(['', '7001\n7002\r\n7003, 7004;7005|7001| 7100 200 ', '']).values).toEqual({
      cards: ['7001', '7002', '7003', '7004', '7005', '7100 200'],
    });
  });
});
