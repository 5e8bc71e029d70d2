import { okTrue, str, is, type Step } from './step.ts';

/** Walkthrough steps: assets and their checkout, in order. */
export const ASSET_STEPS: Step[] = [
  // Assets.
  {
    operationId: 'createAsset',
    body: { nickname: 'Excavator 7', assetClass: 'off-road', serial: 'SN-{{$timestamp}}' },
    status: 201,
    save: { assetId: 'assetId' },
    checks: [okTrue, str('assetId')],
  },
  {
    operationId: 'listAssets',
    query: { limit: '10' },
    status: 200,
    checks: [okTrue, { path: 'assets', type: 'array' }],
  },
  {
    operationId: 'getAsset',
    params: { id: '{{assetId}}' },
    status: 200,
    checks: [okTrue, is('asset.id', '{{assetId}}'), is('asset.meterType', 'HOURS')],
  },
  {
    operationId: 'updateAsset',
    params: { id: '{{assetId}}' },
    body: { yardId: '{{yardId}}', pmInterval: 250 },
    status: 200,
    checks: [okTrue, is('assetId', '{{assetId}}')],
  },
  {
    operationId: 'createAssetsBatch',
    body: { entries: [{ nickname: 'Trailer 3', assetClass: 'trailer' }, { nickname: 'No class' }] },
    status: 200,
    checks: [
      okTrue,
      is('results.0.ok', true),
      str('results.0.assetId'),
      is('results.1.ok', false),
      { path: 'results.1.fieldErrors', type: 'object' },
    ],
  },
  {
    operationId: 'checkoutAsset',
    params: { id: '{{assetId}}' },
    body: { toProjectId: '{{projectId}}', note: 'Bridge job' },
    status: 200,
    checks: [okTrue, is('changed', true)],
  },
  {
    operationId: 'checkinAsset',
    params: { id: '{{assetId}}' },
    body: { note: 'Back at the yard' },
    status: 200,
    checks: [okTrue, is('changed', true)],
  },
];
