import { Readable } from 'node:stream';
import type { z } from 'zod';
import { csvCell } from '../shared/csv-cell.ts';
import type { CostReportRow } from './costs.schemas.ts';

type Row = z.input<typeof CostReportRow>;

const FIGURES = [
  'key',
  'name',
  'assetCount',
  'fuel',
  'parts',
  'labor',
  'repairs',
  'expenses',
  'depreciation',
  'total',
  'meterStart',
  'meterEnd',
  'meterDelta',
  'meterUnit',
  'costPerMeterUnit',
  'fuelVolumeLiters',
] as const;
const ECONOMY = ['litersPerHour', 'kmPerLiter', 'mpgUs'] as const;

export const COST_CSV_HEADER = [...FIGURES, ...ECONOMY.map((k) => `fuelEconomy.${k}`)].join(',') + '\r\n';

const line = (r: Row) =>
  [...FIGURES.map((f) => csvCell(r[f])), ...ECONOMY.map((k) => csvCell(r.fuelEconomy?.[k]))].join(',') + '\r\n';

/**
 * The header, then the rows in chunks, pulled by the client as it reads (Readable.from is lazy): each chunk's rows
 * are shaped (`wire`) only when it is written, so the whole report is never held twice.
 */
export function costCsvStream<T>(rows: T[], wire: (row: T) => Row, chunk = 1000): Readable {
  function* lines() {
    yield COST_CSV_HEADER;
    for (let i = 0; i < rows.length; i += chunk) {
      let text = '';
      for (const r of rows.slice(i, i + chunk)) text += line(wire(r));
      yield text;
    }
  }
  return Readable.from(lines());
}

export const costCsvFileName = (from: Date, to: Date) =>
  `costs-${from.toISOString().slice(0, 10)}-${to.toISOString().slice(0, 10)}.csv`;
