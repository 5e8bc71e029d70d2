import { okTrue, str, is, type Step } from './step.ts';

/** Walkthrough steps: telematics feeds (ISO 15143-3), in order. */
export const TELEMATICS_STEPS: Step[] = [
  {
    operationId: 'createTelematicsConnection',
    body: {
      name: 'VisionLink {{$timestamp}}',
      standard: 'iso-15143-3',
      fleetUrl: 'https://fleet.example.com/aemp/Fleet/1',
      auth: {
        type: 'oauth2-client-credentials',
        tokenUrl: 'https://fleet.example.com/oauth/token',
        clientId: 'fleet-client',
        clientSecret: 'write-only-secret',
      },
      enabled: false,
    },
    status: 201,
    save: { telematicsConnectionId: 'connectionId' },
    checks: [okTrue, str('connectionId')],
  },
  {
    operationId: 'listTelematicsConnections',
    query: { limit: '10' },
    status: 200,
    checks: [okTrue, { path: 'connections', type: 'array' }],
  },
  {
    operationId: 'getTelematicsConnection',
    params: { id: '{{telematicsConnectionId}}' },
    status: 200,
    checks: [okTrue, is('connection.auth.type', 'oauth2-client-credentials'), is('connection.status', 'DISABLED')],
  },
  {
    operationId: 'updateTelematicsConnection',
    params: { id: '{{telematicsConnectionId}}' },
    body: { pollMinutes: 30 },
    status: 200,
    checks: [okTrue, is('connection.pollMinutes', 30)],
  },
  {
    operationId: 'listTelematicsRuns',
    params: { id: '{{telematicsConnectionId}}' },
    status: 200,
    checks: [okTrue, { path: 'runs', type: 'array' }],
  },
  {
    operationId: 'listTelematicsEquipment',
    params: { id: '{{telematicsConnectionId}}' },
    query: { matched: 'false' },
    status: 200,
    checks: [okTrue, { path: 'equipment', type: 'array' }],
  },
  {
    operationId: 'linkTelematicsEquipment',
    name: 'Link a machine to an asset (404 here: no feed has listed this machine yet)',
    params: { id: '{{telematicsConnectionId}}', equipmentKey: '{{equipmentKey}}' },
    body: { assetId: '{{assetId}}' },
    status: 404,
    checks: [is('ok', false), is('error', 'not_found')],
  },
  {
    operationId: 'getAssetTelematics',
    name: "An asset's machine (404 until a feed's machine is linked to it)",
    params: { id: '{{assetId}}' },
    status: 404,
    checks: [is('ok', false), is('error', 'not_found')],
  },
  {
    operationId: 'syncTelematicsConnection',
    params: { id: '{{telematicsConnectionId}}' },
    status: 202,
    checks: [okTrue, str('runId')],
  },
  {
    operationId: 'deleteTelematicsConnection',
    params: { id: '{{telematicsConnectionId}}' },
    status: 200,
    checks: [okTrue, is('connectionId', '{{telematicsConnectionId}}')],
  },
];
