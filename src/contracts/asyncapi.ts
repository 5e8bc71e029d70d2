import { z } from 'zod';
import { stringify } from 'yaml';
import { eventCatalog, EVENT_TYPES, type EventType } from '../events/catalog.ts';
import { EVENT_EXAMPLES } from '../delivery/event-examples.ts';
import { SIGNATURE_TOLERANCE_SEC, signEnvelope } from '../delivery/signer.ts';

type Json = Record<string, unknown>;

/**
 * The secret the message examples are signed with, so a receiver's verifier can be checked against them. It is
 * in the Standard Webhooks format (`whsec_` + standard base64, here of "example-do-not-use-in-production") so
 * the official libraries accept it too; the former `whsec_example_do_not_use_in_production` is not base64.
 */
export const EXAMPLE_SECRET = 'whsec_ZXhhbXBsZS1kby1ub3QtdXNlLWluLXByb2R1Y3Rpb24=';
const EXAMPLE_SENT_AT = new Date('2026-11-22T14:05:03.000Z');

const DESCRIPTION = `Outbound webhooks of the Fleet Operations API. Each subscription (POST /api/v1/webhooks) names an HTTPS
URL and the event types it wants; every matching event is POSTed there as a JSON envelope.

**Signature.** \`X-Service-Signature\` is \`v1=\` followed by the lowercase hex HMAC-SHA256 of the text
\`<X-Service-Timestamp>.<raw body>\`, keyed with the subscription secret (the whole \`whsec_...\` string as UTF-8).
Verify it against the raw body bytes with a constant-time comparison, and reject timestamps more than
${SIGNATURE_TOLERANCE_SEC} seconds from your clock. \`X-Legacy-Signature\`, \`X-Legacy-Timestamp\` and \`X-Legacy-Event\`
carry the same values. During a secret rotation overlap (POST /webhooks/{id}/rotate-secret) the header carries one
value per live secret, newest first, separated by a space (\`v1=<hex new> v1=<hex old>\`): accept the delivery when
any value matches. Outside an overlap it is exactly one \`v1=\` value.

**Standard Webhooks.** Every delivery also carries \`webhook-id\` (the envelope \`id\`), \`webhook-timestamp\` (the
same unix seconds) and \`webhook-signature\` (\`v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<raw body>">\`,
keyed with the base64-decoded part of the secret after \`whsec_\`; one value per live secret, space-separated), as
https://www.standardwebhooks.com/ defines them: the official \`standardwebhooks\` and \`svix\` libraries verify
deliveries given the secret exactly as the API returned it. The examples below are signed with the secret
\`${EXAMPLE_SECRET}\`.

**Delivery.** At least once: answer 2xx within 10 seconds; anything else (network error, timeout, non-2xx,
redirect) is a failure and is retried after 30 s, 2 min, 8 min, 30 min, 2 h and 8 h; when the attempt after the
last delay fails the delivery is ABANDONED. The envelope \`id\` is the delivery id, the same on every retry, resend
(POST /webhooks/{id}/deliveries/{deliveryId}/resend) and recover (POST /webhooks/{id}/recover): use it as your
idempotency key. \`eventId\` names the event in the event feed (GET /api/v1/events/{id}). Payloads are additive:
ignore fields you do not know.`;

/** JSON Schema for AsyncAPI (draft-07 subset), without zod's noise and open to additive fields. */
function toSchema(schema: z.ZodType): Json {
  const tidy = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(tidy);
    if (!node || typeof node !== 'object') return node;
    const out: Json = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === '$schema' || (key === 'additionalProperties' && value === false)) continue;
      if (key === 'pattern' && (node as Json).format === 'date-time') continue;
      out[key] = tidy(value);
    }
    return out;
  };
  return tidy(z.toJSONSchema(schema, { target: 'draft-7', io: 'input' })) as Json;
}

const pascal = (event: string) =>
  event
    .split(/[._]/)
    .map((p) => p[0].toUpperCase() + p.slice(1))
    .join('');

function exampleFor(event: EventType) {
  const signed = signEnvelope(
    EXAMPLE_SECRET,
    {
      id: '0b6f3c1e-8d2a-4f7b-9c55-2e1d7a9f4b10',
      eventId: '5d0c7a3e-2b1f-4e8a-9d6c-7f3a1b2c4e50',
      event,
      organizationId: 'org_example',
      data: EVENT_EXAMPLES[event],
    },
    { now: EXAMPLE_SENT_AT },
  );
  const pick = (name: string) => signed.headers[name.toLowerCase()];
  return {
    name: `${event}-example`,
    headers: Object.fromEntries(HEADER_NAMES.map((h) => [h, pick(h)])),
    payload: JSON.parse(signed.body) as Json,
  };
}

const HEADER_NAMES = [
  'X-Service-Signature',
  'X-Service-Timestamp',
  'X-Service-Event',
  'X-Legacy-Signature',
  'X-Legacy-Timestamp',
  'X-Legacy-Event',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
];

const headersSchema = {
  type: 'object',
  required: [
    'X-Service-Signature',
    'X-Service-Timestamp',
    'X-Service-Event',
    'webhook-id',
    'webhook-timestamp',
    'webhook-signature',
  ],
  properties: {
    'X-Service-Signature': {
      type: 'string',
      pattern: '^v1=[0-9a-f]{64}( v1=[0-9a-f]{64})*$',
      description:
        'v1=<hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the subscription secret>; during a rotation overlap one value per live secret, newest first, space-separated',
    },
    'X-Service-Timestamp': { type: 'string', pattern: '^[0-9]+$', description: 'Unix seconds at signing' },
    'X-Service-Event': { type: 'string', description: 'The event type (equals the envelope event)' },
    'X-Service-Test': { type: 'string', enum: ['1'], description: 'Present only on POST /webhooks/{id}/test sends' },
    'X-Legacy-Signature': { type: 'string', description: 'Same value as X-Service-Signature' },
    'X-Legacy-Timestamp': { type: 'string', description: 'Same value as X-Service-Timestamp' },
    'X-Legacy-Event': { type: 'string', description: 'Same value as X-Service-Event' },
    'webhook-id': {
      type: 'string',
      description: 'Standard Webhooks: the envelope id (stable across retries, resends and recovers)',
    },
    'webhook-timestamp': {
      type: 'string',
      pattern: '^[0-9]+$',
      description: 'Standard Webhooks: unix seconds at signing (same value as X-Service-Timestamp)',
    },
    'webhook-signature': {
      type: 'string',
      pattern: '^v1,[A-Za-z0-9+/]{43}=( v1,[A-Za-z0-9+/]{43}=)*$',
      description:
        'Standard Webhooks: v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<raw body>" keyed with base64-decode(secret without whsec_)>; one per live secret, newest first, space-separated',
    },
  },
};

export function asyncApiDocument(): Json {
  const channels: Json = {};
  const messages: Json = {};
  const schemas: Json = {
    WebhookHeaders: headersSchema,
    WebhookEnvelope: {
      type: 'object',
      required: ['id', 'eventId', 'event', 'organizationId', 'sentAt', 'data'],
      properties: {
        id: {
          type: 'string',
          description: 'Delivery id, the same on every retry, resend and recover; use it as the idempotency key',
        },
        eventId: {
          type: 'string',
          description:
            'The event in the event feed (GET /api/v1/events/{id}); test sends carry a test_ id that is not in the feed',
        },
        event: { type: 'string', description: 'Event type (equals the X-Service-Event header)' },
        organizationId: { type: 'string' },
        sentAt: { type: 'string', format: 'date-time', description: 'When this attempt was signed and sent' },
        data: {
          type: 'object',
          description: 'Event-specific payload; equals the `data` of this event in GET /api/v1/events',
        },
      },
    },
  };
  for (const event of EVENT_TYPES) {
    const name = pascal(event);
    const { summary, data } = eventCatalog[event];
    schemas[`${name}Data`] = toSchema(data);
    messages[name] = {
      messageId: event,
      name: event,
      title: event,
      summary,
      contentType: 'application/json',
      headers: { $ref: '#/components/schemas/WebhookHeaders' },
      payload: {
        allOf: [
          { $ref: '#/components/schemas/WebhookEnvelope' },
          {
            type: 'object',
            properties: { event: { type: 'string', const: event }, data: { $ref: `#/components/schemas/${name}Data` } },
          },
        ],
      },
      tags: [{ name: event.split('.')[0] }],
      examples: [exampleFor(event)],
    };
    channels[event] = {
      description: summary,
      subscribe: {
        operationId: `receive${name}`,
        summary: `Receive ${event}`,
        description: `POSTed to the subscription URL of every active subscription listing ${event}.`,
        bindings: { http: { type: 'request', method: 'POST', bindingVersion: '0.1.0' } },
        message: { $ref: `#/components/messages/${name}` },
      },
    };
  }
  return {
    asyncapi: '2.6.0',
    id: 'urn:fleet-ops:webhooks',
    info: { title: 'Fleet Operations API webhooks', version: '1.0.0', description: DESCRIPTION },
    defaultContentType: 'application/json',
    tags: [...new Set(EVENT_TYPES.map((e) => e.split('.')[0]))].map((name) => ({
      name,
      description: `${name} events`,
    })),
    servers: {
      receiver: {
        url: '{receiverUrl}',
        protocol: 'https',
        description: 'Your endpoint: the url of the webhook subscription',
        variables: {
          receiverUrl: { default: 'https://example.com/webhooks/fleet', description: 'The subscription url' },
        },
        security: [{ webhookSignature: [] }],
      },
    },
    channels,
    components: {
      schemas,
      messages,
      securitySchemes: {
        webhookSignature: {
          type: 'httpApiKey',
          name: 'X-Service-Signature',
          in: 'header',
          description: `HMAC-SHA256 over "<X-Service-Timestamp>.<raw body>" keyed with the subscription secret, sent as v1=<hex> (one value per live secret during a rotation overlap). Reject timestamps more than ${SIGNATURE_TOLERANCE_SEC} s from your clock. The Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature) carry the same guarantee for the official libraries.`,
        },
      },
    },
  };
}

export const renderAsyncApiYaml = () => stringify(asyncApiDocument(), { lineWidth: 0 });
