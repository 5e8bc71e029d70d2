// The handler of each imported type.
import { assetImport } from './import-assets.operations.ts';
import type { ImportHandler } from './import-handler.operations.ts';
import { fuelEntryImport } from './import-fuel-entries.operations.ts';
import { meterReadingImport } from './import-meter-readings.operations.ts';
import { partImport } from './import-parts.operations.ts';
import { stockCountImport } from './import-stock-counts.operations.ts';
import { toolImport } from './import-tools.operations.ts';
import { vendorImport } from './import-vendors.operations.ts';
import type { ImportType } from './imports.schemas.ts';

const HANDLERS: Partial<Record<ImportType, ImportHandler>> = {
  assets: assetImport,
  meter_readings: meterReadingImport,
  fuel_entries: fuelEntryImport,
  parts: partImport,
  stock_counts: stockCountImport,
  tools: toolImport,
  vendors: vendorImport,
};

export const handlerOf = (type: string): ImportHandler | undefined => HANDLERS[type as ImportType];
