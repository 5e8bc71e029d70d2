import { createHash } from 'node:crypto';
import { z } from 'zod';
import { EVENT_EXAMPLES } from '../delivery/event-examples.ts';
import { signEnvelope } from '../delivery/signer.ts';
import { eventCatalog, EVENT_TYPES, type EventType } from '../events/catalog.ts';
import { docsPage, escapeHtml } from './docs.html.ts';
import { CURL_SEND_SNIPPET, NODE_SNIPPET, PYTHON_SNIPPET, SHELL_SNIPPET, TOLERANCE_SEC } from './docs.snippets.ts';

/**
 * /docs/webhooks, generated from the event catalog (every event, its payload schema and example) and from the
 * signing format decided for the service (the seed's X-Service-Signature plus the Standard Webhooks headers).
 * Every value that reaches the HTML goes through escapeHtml.
 */
type Json = Record<string, unknown>;

/** A well-formed example secret (whsec_ + standard base64 of 32 bytes), fixed so the worked example is stable. */
export const DOCS_EXAMPLE_SECRET = `whsec_${createHash('sha256').update('fleet-ops documentation example').digest('base64')}`;
export const DOCS_EXAMPLE_ID = '0b6f3c1e-8d2a-4f7b-9c55-2e1d7a9f4b10';
const EXAMPLE_SENT_AT = new Date('2026-11-22T14:05:03.000Z');

/** An example delivery signed by the dispatcher's own signer, so the page shows exactly what receivers get. */
export function exampleDelivery(event: EventType) {
  const signed = signEnvelope(
    DOCS_EXAMPLE_SECRET,
    { id: DOCS_EXAMPLE_ID, eventId: 'evt_01', event, organizationId: 'org_example', data: EVENT_EXAMPLES[event] },
    { now: EXAMPLE_SENT_AT },
  );
  const { 'user-agent': _agent, ...headers } = signed.headers;
  for (const legacy of Object.keys(headers).filter((h) => h.startsWith('x-legacy-'))) delete headers[legacy];
  return { body: signed.body, headers, timestamp: Math.floor(EXAMPLE_SENT_AT.getTime() / 1000) };
}

const HEADERS: [string, string][] = [
  ['webhook-id', 'The delivery id (the envelope id): the same on every retry, resend and recovery. Deduplicate on it.'],
  ['webhook-timestamp', 'Unix seconds when this attempt was signed (equals X-Service-Timestamp).'],
  [
    'webhook-signature',
    'Space-separated list of v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<raw body>">, keyed with ' +
      'the base64-decoded part of the secret after whsec_. One entry per live secret: two, newest first, while a ' +
      'secret is being rotated. This is the Standard Webhooks format, so its libraries (standardwebhooks, svix) verify it.',
  ],
  [
    'X-Service-Signature',
    'v1=<hex HMAC-SHA256 of "<X-Service-Timestamp>.<raw body>">, keyed with the whole secret string (whsec_ ' +
      'included) as UTF-8. Exactly one value, except during a rotation overlap: v1=<new> v1=<old>, newest first.',
  ],
  ['X-Service-Timestamp', 'Unix seconds when this attempt was signed.'],
  ['X-Service-Event', 'The event type (equals the envelope event).'],
  ['X-Service-Test', 'Present (value 1) only on sends of POST /api/v1/webhooks/{id}/test.'],
  [
    'X-Legacy-Signature, X-Legacy-Timestamp, X-Legacy-Event',
    'The same values as the X-Service-* headers, for older receivers.',
  ],
  ['Content-Type', 'application/json'],
  ['User-Agent', 'FleetOps-Webhooks/1'],
];

const ENVELOPE: [string, string][] = [
  ['id', 'The delivery id, the same on every retry: your idempotency key.'],
  ['event', 'The event type, one of the events below.'],
  ['eventId', 'The event in the event feed (GET /api/v1/events/{id}); several subscriptions share it.'],
  ['organizationId', 'The organisation the event belongs to.'],
  ['sentAt', 'When this attempt was signed and sent (ISO 8601, UTC).'],
  [
    'data',
    'The event payload: its schema is listed with each event. Fields may be added: ignore those you do not know.',
  ],
];

const code = (text: string) => `<pre><code>${escapeHtml(text)}</code></pre>`;
const table = (head: [string, string], rows: [string, string][]) =>
  `<table><thead><tr><th>${escapeHtml(head[0])}</th><th>${escapeHtml(head[1])}</th></tr></thead><tbody>${rows
    .map(([k, v]) => `<tr><td><code>${escapeHtml(k)}</code></td><td>${escapeHtml(v)}</td></tr>`)
    .join('')}</tbody></table>`;

function jsonSchemaOf(schema: z.ZodType): Json {
  const out = z.toJSONSchema(schema, { target: 'draft-7', io: 'input' }) as Json;
  delete out.$schema;
  return out;
}

/** "string", "string | null", "array of object"... from a JSON Schema node. */
function typeOf(node: Json): string {
  if (Array.isArray(node.anyOf)) return (node.anyOf as Json[]).map(typeOf).join(' | ');
  if (node.enum) return (node.enum as unknown[]).map((v) => JSON.stringify(v)).join(' | ');
  if (node.type === 'array') return `array of ${node.items ? typeOf(node.items as Json) : 'any'}`;
  if (node.type === 'string' && node.format) return `string (${String(node.format)})`;
  return String(node.type ?? 'any');
}

function fieldRows(schema: Json): string {
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const properties = (schema.properties ?? {}) as Record<string, Json>;
  return Object.entries(properties)
    .map(
      ([name, node]) =>
        `<tr><td><code>${escapeHtml(name)}</code></td><td>${escapeHtml(typeOf(node))}</td><td>${
          required.has(name) ? 'always' : 'optional'
        }</td><td>${escapeHtml(node.description ?? '')}</td></tr>`,
    )
    .join('');
}

export const eventAnchor = (event: string) => `event-${event.replace(/[^A-Za-z0-9_-]/g, '-')}`;

function eventSection(event: EventType): string {
  const { summary, data } = eventCatalog[event];
  const schema = jsonSchemaOf(data);
  const example = exampleDelivery(event);
  return `<section id="${escapeHtml(eventAnchor(event))}" class="event">
<h3><code>${escapeHtml(event)}</code></h3>
<p>${escapeHtml(summary)}</p>
<table><thead><tr><th>data field</th><th>type</th><th>present</th><th>note</th></tr></thead><tbody>${fieldRows(schema)}</tbody></table>
<details><summary>JSON Schema of <code>data</code></summary>${code(JSON.stringify(schema, null, 2))}</details>
<p class="muted">Example delivery body:</p>
${code(JSON.stringify(JSON.parse(example.body), null, 2))}
</section>`;
}

export function renderWebhooksPage(): string {
  const worked = exampleDelivery('flag.created');
  const toc = EVENT_TYPES.map(
    (e) => `<li><a href="#${escapeHtml(eventAnchor(e))}"><code>${escapeHtml(e)}</code></a></li>`,
  ).join('');
  const body = `<h1>Webhooks</h1>
<p>Subscribe with <code>POST /api/v1/webhooks</code> (an HTTPS URL and the event types you want; scope
<code>events:write</code>). Every matching event is POSTed there as a signed JSON envelope. Answer 2xx within
10 seconds; anything else (error, timeout, non-2xx, redirect) is retried after 30 s, 2 min, 8 min, 30 min, 2 h and
8 h, then abandoned. Delivery is at least once: deduplicate on the envelope <code>id</code>.
The same events are described machine-readably in <a href="/asyncapi.yaml">asyncapi.yaml</a>.</p>
<ul class="toc"><li><a href="#envelope">Envelope</a></li><li><a href="#headers">Headers</a></li>
<li><a href="#verify">Verifying a signature</a></li><li><a href="#example">Worked example</a></li>
<li><a href="#events">Events (${EVENT_TYPES.length})</a></li></ul>

<h2 id="envelope">Envelope</h2>
${table(['field', 'meaning'], ENVELOPE)}

<h2 id="headers">Headers</h2>
<p>Each delivery carries two independent signatures over the same raw body: verify either one.</p>
${table(['header', 'meaning'], HEADERS)}
<p>The secret is shown once, when you create the subscription or rotate its secret
(<code>POST /api/v1/webhooks/{id}/rotate-secret</code>, <code>overlapSeconds</code> default 86400): it is
<code>whsec_</code> followed by standard base64 of 32 random bytes. While the old secret is still live, both
signature headers carry one value per secret, newest first; accept the delivery when any value matches. Secrets
created before this format were URL-safe base64: the examples below accept both, but the official Standard Webhooks
libraries need the standard alphabet, so rotate such a secret to use them.</p>

<h2 id="verify">Verifying a signature</h2>
<p>Always verify against the raw body bytes (before any JSON parsing or re-serialising), compare in constant time,
and refuse timestamps more than ${TOLERANCE_SEC} seconds from your clock (this stops replays).</p>
<h3>Node.js</h3>
${code(NODE_SNIPPET)}
<h3>Python</h3>
${code(PYTHON_SNIPPET)}
<h3>Shell: openssl</h3>
<p>Check a delivery you captured (the raw body in <code>body.json</code>):</p>
${code(SHELL_SNIPPET)}
<h3>curl: send a signed test delivery to your receiver</h3>
<p><code>POST /api/v1/webhooks/{id}/test</code> makes the service send a real, signed <code>flag.created</code>
(with <code>X-Service-Test: 1</code>). To exercise a receiver without the service, sign a body yourself:</p>
${code(CURL_SEND_SNIPPET)}

<h2 id="example">Worked example</h2>
<p>Check your code against these values (with your clock set to the timestamp, or the tolerance check lifted).
Secret: <code>${escapeHtml(DOCS_EXAMPLE_SECRET)}</code>.</p>
${table(
  ['header', 'value'],
  Object.entries(worked.headers).filter(([name]) => name !== 'content-type'),
)}
<p class="muted">Raw body (exactly these bytes, no trailing newline):</p>
${code(worked.body)}

<h2 id="events">Events</h2>
<ul class="toc">${toc}</ul>
${EVENT_TYPES.map(eventSection).join('\n')}`;
  return docsPage({ title: 'Webhooks · Fleet Operations API', current: '/docs/webhooks', body });
}
