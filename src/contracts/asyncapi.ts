import { z } from 'zod';
import { stringify } from 'yaml';
import { eventCatalog, EVENT_TYPES, type EventType } from '../events/catalog.ts';
import { EVENT_EXAMPLES } from '../delivery/event-examples.ts';
import { SIGNATURE_TOLERANCE_SEC, signEnvelope } from '../delivery/signer.ts';

type Json = Record<string, unknown>;

/** The secret the message examples are signed with, so a receiver's verifier can be checked against them. */
export const EXAMPLE_SECRET = 'whsec_example_do_not_use_in_production';
const EXAMPLE_SENT_AT = new Date('2026-11-22T14:05:03.000Z');

const DESCRIPTION = `Outbound webhooks of the Fleet Operations API. Each subscription (POST /api/v1/webhooks) names an HTTPS
URL and the event types it wants; every matching event is POSTed there as a JSON envelope.

**Signature.** \`X-Service-Signature\` is \`v1=\` followed by the lowercase hex HMAC-SHA256 of the text
\`<X-Service-Timestamp>.<raw body>\`, keyed with the subscription secret (the whole \`whsec_...\` string as UTF-8).
Verify it against the raw body bytes with a constant-time comparison, and reject timestamps more than
${SIGNATURE_TOLERANCE_SEC} seconds from your clock. \`X-Legacy-Signature\`, \`X-Legacy-Timestamp\` and \`X-Legacy-Event\`
carry the same values. The examples below are signed with the secret \`${EXAMPLE_SECRET}\`.

**Delivery.** At least once: answer 2xx within 10 seconds; anything else (network error, timeout, non-2xx,
redirect) is a failure and is retried after 30 s, 2 min, 8 min, 30 min, 2 h and 8 h; when the attempt after the
last delay fails the delivery is ABANDONED. The envelope \`id\` is the delivery id, the same on every retry: use it
as your idempotency key. Payloads are additive: ignore fields you do not know.`;

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
    { id: '0b6f3c1e-8d2a-4f7b-9c55-2e1d7a9f4b10', event, organizationId: 'org_example', data: EVENT_EXAMPLES[event] },
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
];

const headersSchema = {
  type: 'object',
  required: ['X-Service-Signature', 'X-Service-Timestamp', 'X-Service-Event'],
  properties: {
    'X-Service-Signature': {
      type: 'string',
      pattern: '^v1=[0-9a-f]{64}$',
      description: 'v1=<hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the subscription secret>',
    },
    'X-Service-Timestamp': { type: 'string', pattern: '^[0-9]+$', description: 'Unix seconds at signing' },
    'X-Service-Event': { type: 'string', description: 'The event type (equals the envelope event)' },
    'X-Service-Test': { type: 'string', enum: ['1'], description: 'Present only on POST /webhooks/{id}/test sends' },
    'X-Legacy-Signature': { type: 'string', description: 'Same value as X-Service-Signature' },
    'X-Legacy-Timestamp': { type: 'string', description: 'Same value as X-Service-Timestamp' },
    'X-Legacy-Event': { type: 'string', description: 'Same value as X-Service-Event' },
  },
};

export function asyncApiDocument(): Json {
  const channels: Json = {};
  const messages: Json = {};
  const schemas: Json = {
    WebhookHeaders: headersSchema,
    WebhookEnvelope: {
      type: 'object',
      required: ['id', 'event', 'organizationId', 'sentAt', 'data'],
      properties: {
        id: { type: 'string', description: 'Delivery id, the same on every retry; use it as the idempotency key' },
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
          description: `HMAC-SHA256 over "<X-Service-Timestamp>.<raw body>" keyed with the subscription secret, sent as v1=<hex>. Reject timestamps more than ${SIGNATURE_TOLERANCE_SEC} s from your clock.`,
        },
      },
    },
  };
}

export const renderAsyncApiYaml = () => stringify(asyncApiDocument(), { lineWidth: 0 });
