import { okTrue, str, is, type Step } from './step.ts';

/** Walkthrough steps: users and API keys, in order. */
export const PEOPLE_STEPS: Step[] = [
  // People and keys: self-service for the organisation's administrators.
  {
    operationId: 'createUser',
    body: { email: 'mechanic-{{$timestamp}}@example.com', name: 'Mo Mechanic' },
    status: 201,
    save: { userId: 'userId' },
    checks: [okTrue, str('userId'), is('restored', false)],
  },
  {
    operationId: 'listUsers',
    query: { q: 'mechanic', limit: '10' },
    status: 200,
    checks: [okTrue, { path: 'users', type: 'array' }],
  },
  {
    operationId: 'getUser',
    params: { id: '{{userId}}' },
    status: 200,
    checks: [okTrue, is('user.id', '{{userId}}'), is('user.removedAt', null)],
  },
  {
    operationId: 'updateUser',
    params: { id: '{{userId}}' },
    body: { name: 'Mo the Mechanic' },
    status: 200,
    checks: [okTrue, is('user.name', 'Mo the Mechanic')],
  },
  {
    operationId: 'createApiKey',
    body: { label: 'Telematics sync', scopes: ['assets:read', 'hours:write'] },
    status: 201,
    save: { apiKeyId: 'apiKeyId' },
    checks: [okTrue, str('apiKeyId'), str('key'), { path: 'apiKey.scopes', type: 'array' }],
  },
  {
    operationId: 'listApiKeys',
    query: { limit: '10' },
    status: 200,
    checks: [okTrue, { path: 'apiKeys', type: 'array' }],
  },
  {
    operationId: 'getApiKey',
    params: { id: '{{apiKeyId}}' },
    status: 200,
    checks: [okTrue, is('apiKey.id', '{{apiKeyId}}')],
  },
  {
    operationId: 'rollApiKey',
    params: { id: '{{apiKeyId}}' },
    body: { expireOldInSeconds: 3600 },
    status: 201,
    save: { rolledKeyId: 'apiKeyId' },
    checks: [okTrue, str('key'), is('previousKey.id', '{{apiKeyId}}')],
  },
  {
    operationId: 'revokeApiKey',
    params: { id: '{{rolledKeyId}}' },
    status: 200,
    checks: [okTrue, is('apiKeyId', '{{rolledKeyId}}')],
  },
  {
    operationId: 'removeUser',
    params: { id: '{{userId}}' },
    status: 200,
    checks: [okTrue, is('userId', '{{userId}}'), str('removedAt')],
  },
];
