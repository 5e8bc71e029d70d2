import type { WebhookEvent } from './generated/events.js';

/** Why a delivery was refused. */
export type WebhookVerificationReason =
  | 'missing_header'
  | 'malformed_header'
  | 'timestamp_too_old'
  | 'timestamp_in_future'
  | 'bad_signature'
  | 'invalid_secret'
  | 'malformed_body';

export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
  constructor(
    readonly reason: WebhookVerificationReason,
    message: string,
  ) {
    super(message);
  }
}

/** Node's `req.headers`, a fetch `Headers`, or any object of header name to value(s). */
export type WebhookHeaders =
  Headers | { get(name: string): string | null } | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** Largest accepted difference between the delivery's timestamp and now, in seconds. Default 300. */
  toleranceSec?: number;
  /** The current time (tests, replays of stored deliveries). Default now. */
  now?: Date | number;
}

const encoder = new TextEncoder();

/**
 * Verifies a webhook delivery and returns its typed event. Checks, in order: the headers are there, the
 * timestamp is within `toleranceSec` of now, and one of the signatures matches one of the secrets (pass
 * several while you rotate). Standard Webhooks headers (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`) are checked when present; otherwise, or when they do not verify, the service's own
 * `X-Service-Signature`/`X-Service-Timestamp` (or their X-Legacy-* aliases). Signatures are computed over the
 * raw body bytes with Web Crypto and compared in constant time. Pass the body exactly as received: a
 * re-serialised JSON object will not verify.
 * @throws WebhookVerificationError with the reason it refused
 */
export async function verifyWebhook(
  rawBody: string | Uint8Array | ArrayBuffer,
  headers: WebhookHeaders,
  secret: string | readonly string[],
  options: VerifyOptions = {},
): Promise<WebhookEvent> {
  const body = typeof rawBody === 'string' ? encoder.encode(rawBody) : new Uint8Array(rawBody);
  const secrets = (typeof secret === 'string' ? [secret] : [...secret]).filter(Boolean);
  if (!secrets.length) throw new WebhookVerificationError('invalid_secret', 'No webhook secret given');
  const header = headerReader(headers);
  const std = { id: header('webhook-id'), ts: header('webhook-timestamp'), sig: header('webhook-signature') };
  const seed = {
    ts: header('x-service-timestamp') ?? header('x-legacy-timestamp'),
    sig: header('x-service-signature') ?? header('x-legacy-signature'),
  };
  const hasStd = Boolean(std.sig);
  const hasSeed = Boolean(seed.sig);
  if (!hasStd && !hasSeed) {
    throw new WebhookVerificationError('missing_header', 'No webhook-signature or X-Service-Signature header');
  }
  const nowSec = Math.floor(Number(options.now ?? Date.now()) / 1000);
  const tolerance = options.toleranceSec ?? 300;

  let failure: WebhookVerificationError | undefined;
  if (hasStd) {
    failure = await attempt(async () => {
      if (!std.id) throw new WebhookVerificationError('missing_header', 'webhook-signature without webhook-id');
      checkTimestamp(std.ts, 'webhook-timestamp', nowSec, tolerance);
      const signed = concat(encoder.encode(`${std.id}.${std.ts}.`), body);
      const expected = parseList(std.sig!, /^v1,(.+)$/, base64Bytes, 'webhook-signature');
      const keys = secrets.map((s) => standardKey(s));
      await matchAny(keys, signed, expected);
    });
    if (!failure) return parseEvent(body);
  }
  if (hasSeed) {
    const seedFailure = await attempt(async () => {
      checkTimestamp(seed.ts, 'X-Service-Timestamp', nowSec, tolerance);
      const signed = concat(encoder.encode(`${seed.ts}.`), body);
      const expected = parseList(seed.sig!, /^v1=([0-9a-fA-F]+)$/, hexBytes, 'X-Service-Signature');
      await matchAny(
        secrets.map((s) => encoder.encode(s)),
        signed,
        expected,
      );
    });
    if (!seedFailure) return parseEvent(body);
    failure ??= seedFailure;
  }
  throw failure!;
}

async function attempt(check: () => Promise<void>): Promise<WebhookVerificationError | undefined> {
  try {
    await check();
    return undefined;
  } catch (err) {
    if (err instanceof WebhookVerificationError) return err;
    throw err;
  }
}

function headerReader(headers: WebhookHeaders): (name: string) => string | undefined {
  if (typeof (headers as Headers).get === 'function') {
    return (name) => (headers as Headers).get(name)?.trim() || undefined;
  }
  const lower = new Map<string, string>();
  for (const [k, v] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (v !== undefined) lower.set(k.toLowerCase(), Array.isArray(v) ? v.join(' ') : String(v));
  }
  return (name) => lower.get(name)?.trim() || undefined;
}

function checkTimestamp(value: string | undefined, name: string, nowSec: number, tolerance: number) {
  if (!value) throw new WebhookVerificationError('missing_header', `No ${name} header`);
  if (!/^\d{1,12}$/.test(value)) throw new WebhookVerificationError('malformed_header', `${name} is not unix seconds`);
  const ts = Number(value);
  if (ts < nowSec - tolerance) {
    throw new WebhookVerificationError(
      'timestamp_too_old',
      `${name} is ${nowSec - ts} s old (tolerance ${tolerance} s)`,
    );
  }
  if (ts > nowSec + tolerance) {
    throw new WebhookVerificationError(
      'timestamp_in_future',
      `${name} is ${ts - nowSec} s ahead (tolerance ${tolerance} s)`,
    );
  }
}

/** A space-separated list of signatures (several during a secret rotation); entries of other versions are skipped. */
function parseList(value: string, shape: RegExp, decode: (s: string) => Uint8Array | null, name: string) {
  const out: Uint8Array[] = [];
  for (const entry of value.split(/\s+/).filter(Boolean)) {
    const m = shape.exec(entry);
    const bytes = m ? decode(m[1]) : null;
    if (bytes) out.push(bytes);
  }
  if (!out.length) throw new WebhookVerificationError('malformed_header', `${name} holds no v1 signature`);
  return out;
}

/** Standard Webhooks: the key is the base64 after `whsec_` (either base64 alphabet is accepted). */
function standardKey(secret: string): Uint8Array {
  const key = base64Bytes(secret.startsWith('whsec_') ? secret.slice(6) : secret);
  if (!key?.length) throw new WebhookVerificationError('invalid_secret', 'The secret is not whsec_<base64>');
  return key;
}

async function matchAny(keys: Uint8Array[], signed: Uint8Array, expected: Uint8Array[]) {
  for (const key of keys) {
    const mac = new Uint8Array(await hmacSha256(key, signed));
    // Every candidate is compared in full, so timing says nothing about which one (or how much of it) matched.
    let ok = false;
    for (const sig of expected) ok = timingSafeEqual(mac, sig) || ok;
    if (ok) return;
  }
  throw new WebhookVerificationError('bad_signature', 'No signature matches the secret');
}

async function hmacSha256(key: Uint8Array, data: Uint8Array): Promise<ArrayBuffer> {
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) throw new Error('Web Crypto (crypto.subtle) is not available in this runtime');
  const k = await subtle.importKey('raw', key.slice(), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return subtle.sign('HMAC', k, data.slice());
}

/** Constant time for equal lengths; a length is not secret (every v1 signature is 32 bytes). */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

function hexBytes(hex: string): Uint8Array | null {
  if (hex.length % 2) return null;
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

function base64Bytes(text: string): Uint8Array | null {
  const std = text.replace(/-/g, '+').replace(/_/g, '/').replace(/=+$/, '');
  if (!/^[A-Za-z0-9+/]*$/.test(std) || std.length % 4 === 1) return null;
  const bin = atob(std + '='.repeat((4 - (std.length % 4)) % 4));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

function parseEvent(body: Uint8Array): WebhookEvent {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(body));
  } catch {
    throw new WebhookVerificationError('malformed_body', 'The signed body is not JSON');
  }
  const e = parsed as Record<string, unknown> | null;
  if (!e || typeof e.id !== 'string' || typeof e.event !== 'string' || typeof e.data !== 'object') {
    throw new WebhookVerificationError('malformed_body', 'The signed body is not a webhook envelope');
  }
  return e as unknown as WebhookEvent;
}
