import { okTrue, str, type Step } from './step.ts';

/** Walkthrough steps: the event feed, in order. */
export const EVENT_STEPS: Step[] = [
  // The event feed: what the webhooks deliver, to poll or to catch up from.
  {
    operationId: 'listEvents',
    query: { type: 'asset.created,flag.created', limit: '5' },
    status: 200,
    save: { eventId: 'events.0.id' },
    checks: [okTrue, { path: 'events', type: 'array' }, str('events.0.id'), str('events.0.event')],
  },
  { operationId: 'getEvent', params: { id: '{{eventId}}' }, status: 200, checks: [okTrue, str('event.id')] },
];
