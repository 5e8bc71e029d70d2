import { okTrue, str, is, type Step } from './step.ts';

const BOUNDARY = 'fleet-walkthrough-imp1';
const field = (name: string, value: string) =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
const CSV =
  'Asset Number,Nickname,Asset Class\r\nIMP-{{$timestamp}}-1,Imported loader,off-road\r\nIMP-{{$timestamp}}-2,,off-road\r\n';
const MULTIPART =
  field('type', 'assets') +
  field('mapping', '{"Asset Number":"customerAssetNumber"}') +
  field('options', '{"onError":"reject_all"}') +
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="fleet.csv"\r\n` +
  `Content-Type: text/csv\r\n\r\n${CSV}\r\n--${BOUNDARY}--\r\n`;

/** Walkthrough steps: a spreadsheet of assets, checked before anything is written. */
export const IMPORT_STEPS: Step[] = [
  {
    operationId: 'createImportMapping',
    name: 'Save the column layout of a spreadsheet to reuse',
    body: {
      name: 'Fleet list {{$timestamp}}',
      type: 'assets',
      mapping: { 'Asset Number': 'customerAssetNumber' },
      options: { onError: 'skip_rows' },
    },
    status: 201,
    save: { importMappingId: 'mappingId' },
    checks: [okTrue, str('mappingId')],
  },
  {
    operationId: 'listImportMappings',
    query: { type: 'assets', limit: '10' },
    status: 200,
    checks: [okTrue, { path: 'mappings', type: 'array' }],
  },
  {
    operationId: 'createImport',
    name: 'Upload a CSV of assets (multipart: type, mapping, options, then file); it is validated, not written',
    headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    rawBody: MULTIPART,
    status: 202,
    save: { importId: 'importId' },
    checks: [okTrue, str('importId')],
  },
  {
    operationId: 'getImport',
    params: { id: '{{importId}}' },
    status: 200,
    checks: [okTrue, is('import.type', 'assets'), str('import.status')],
  },
  {
    operationId: 'listImports',
    query: { limit: '10' },
    status: 200,
    checks: [okTrue, { path: 'imports', type: 'array' }],
  },
  {
    operationId: 'listImportRows',
    params: { id: '{{importId}}' },
    query: { limit: '50' },
    status: 200,
    checks: [okTrue, { path: 'rows', type: 'array' }],
  },
  {
    operationId: 'listImportErrors',
    params: { id: '{{importId}}' },
    query: { limit: '50' },
    status: 200,
    checks: [okTrue, { path: 'errors', type: 'array' }],
  },
  {
    operationId: 'commitImport',
    name: 'Committing a reject_all import with a row in error is refused: nothing is written',
    params: { id: '{{importId}}' },
    status: 409,
    checks: [is('error', 'import_has_errors')],
  },
  {
    operationId: 'rollbackImport',
    name: 'Only a completed import rolls back',
    params: { id: '{{importId}}' },
    status: 409,
    checks: [is('error', 'import_not_ready')],
  },
];
