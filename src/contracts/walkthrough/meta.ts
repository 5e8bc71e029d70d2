import { okTrue, str, is, type Step } from './step.ts';

/** Walkthrough steps: health, version, changelog and the calling key, in order. */
export const META_STEPS: Step[] = [
  // Public: no key needed.
  { operationId: 'getHealth', status: 200, checks: [okTrue, is('database', 'ok'), is('apiVersion', 'v1')] },
  { operationId: 'getLiveness', status: 200, checks: [okTrue] },
  { operationId: 'getVersion', status: 200, checks: [okTrue, is('apiVersion', 'v1')] },
  { operationId: 'getChangelog', status: 200, checks: [{ path: 'entries', type: 'array' }] },
  // Who am I, and how much of my rate limit is left.
  {
    operationId: 'getMe',
    status: 200,
    checks: [okTrue, str('organization.id'), { path: 'apiKey.scopes', type: 'array' }],
  },
  { operationId: 'getMyUsage', status: 200, checks: [okTrue, { path: 'rateLimit.limit', type: 'number' }] },
];
