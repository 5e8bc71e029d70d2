import { createHmac, randomBytes } from 'node:crypto';

/** Receivers reject deliveries whose timestamp is further than this from their clock. */
export const SIGNATURE_TOLERANCE_SEC = 300;

/** 32 random bytes, base64url: the HMAC key is this whole string, used as UTF-8 text. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

/** `v1=<hex HMAC-SHA256(secret, "<timestamp>.<raw body>")>` */
export function signatureFor(secret: string, timestampSec: number, rawBody: string | Buffer): string {
  return `v1=${createHmac('sha256', secret).update(`${timestampSec}.`).update(rawBody).digest('hex')}`;
}

export interface WebhookEnvelope {
  /** The delivery id: the same on every retry, the receiver's idempotency key. */
  id: string;
  event: string;
  organizationId: string;
  sentAt: string;
  data: unknown;
}

export interface SignedRequest {
  body: string;
  headers: Record<string, string>;
  signature: string;
  sentAt: Date;
}

/**
 * Serialises the envelope once and signs exactly those bytes; the X-Legacy-* aliases carry the same values
 * for receivers written against the previous header names.
 */
export function signEnvelope(
  secret: string,
  envelope: Omit<WebhookEnvelope, 'sentAt'>,
  options: { now?: Date; test?: boolean } = {},
): SignedRequest {
  const sentAt = options.now ?? new Date();
  const timestamp = Math.floor(sentAt.getTime() / 1000);
  const body = JSON.stringify({
    id: envelope.id,
    event: envelope.event,
    organizationId: envelope.organizationId,
    sentAt: sentAt.toISOString(),
    data: envelope.data,
  });
  const signature = signatureFor(secret, timestamp, body);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'FleetOps-Webhooks/1',
    'x-service-signature': signature,
    'x-service-timestamp': String(timestamp),
    'x-service-event': envelope.event,
    'x-legacy-signature': signature,
    'x-legacy-timestamp': String(timestamp),
    'x-legacy-event': envelope.event,
  };
  if (options.test) headers['x-service-test'] = '1';
  return { body, headers, signature, sentAt };
}
