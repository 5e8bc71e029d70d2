import { createHmac, randomBytes } from 'node:crypto';

/** Receivers reject deliveries whose timestamp is further than this from their clock. */
export const SIGNATURE_TOLERANCE_SEC = 300;

const PREFIX = 'whsec_';

/**
 * `whsec_` + standard base64 (with padding) of 32 random bytes: the Standard Webhooks secret format, so the
 * official `standardwebhooks` / `svix` libraries accept the secret exactly as the API returns it.
 */
export function newWebhookSecret(): string {
  return `${PREFIX}${randomBytes(32).toString('base64')}`;
}

/** `v1=<hex HMAC-SHA256(secret, "<timestamp>.<raw body>")>`; the key is the whole secret as UTF-8 (seed rule). */
export function signatureFor(secret: string, timestampSec: number, rawBody: string | Buffer): string {
  return `v1=${createHmac('sha256', secret).update(`${timestampSec}.`).update(rawBody).digest('hex')}`;
}

/**
 * The Standard Webhooks key: base64-decode of the secret after `whsec_`. Node's decoder reads both the standard
 * and the URL-safe alphabet, so secrets issued before the format change (base64url) keep signing.
 */
export function standardKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
}

/** `v1,<base64 HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<raw body>")>` (Standard Webhooks). */
export function standardSignatureFor(secret: string, id: string, timestampSec: number, rawBody: string | Buffer) {
  return `v1,${createHmac('sha256', standardKey(secret)).update(`${id}.${timestampSec}.`).update(rawBody).digest('base64')}`;
}

export interface WebhookEnvelope {
  /** The delivery id: the same on every retry, resend and recover; the receiver's idempotency key. */
  id: string;
  /** The event's id in the event feed (GET /api/v1/events/{id}). */
  eventId: string;
  event: string;
  organizationId: string;
  sentAt: string;
  data: unknown;
}

export interface SignedRequest {
  body: string;
  headers: Record<string, string>;
  /** The X-Service-Signature value sent (one `v1=` per live secret). */
  signature: string;
  sentAt: Date;
}

/**
 * Serialises the envelope once and signs exactly those bytes with every live secret (newest first): the
 * seed's X-Service-Signature (`v1=<hex>`, space-separated during an overlap) with its X-Legacy-* aliases, and
 * the Standard Webhooks headers (webhook-id = the envelope id, webhook-timestamp, webhook-signature).
 */
export function signEnvelope(
  secrets: string | string[],
  envelope: Omit<WebhookEnvelope, 'sentAt'>,
  options: { now?: Date; test?: boolean } = {},
): SignedRequest {
  const keys = typeof secrets === 'string' ? [secrets] : secrets;
  const sentAt = options.now ?? new Date();
  const timestamp = Math.floor(sentAt.getTime() / 1000);
  const body = JSON.stringify({
    id: envelope.id,
    eventId: envelope.eventId,
    event: envelope.event,
    organizationId: envelope.organizationId,
    sentAt: sentAt.toISOString(),
    data: envelope.data,
  });
  const signature = keys.map((k) => signatureFor(k, timestamp, body)).join(' ');
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'FleetOps-Webhooks/1',
    'x-service-signature': signature,
    'x-service-timestamp': String(timestamp),
    'x-service-event': envelope.event,
    'x-legacy-signature': signature,
    'x-legacy-timestamp': String(timestamp),
    'x-legacy-event': envelope.event,
    'webhook-id': envelope.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': keys.map((k) => standardSignatureFor(k, envelope.id, timestamp, body)).join(' '),
  };
  if (options.test) headers['x-service-test'] = '1';
  return { body, headers, signature, sentAt };
}
