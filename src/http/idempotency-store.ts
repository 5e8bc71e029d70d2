import { createHash, randomBytes } from 'node:crypto';
import { open as openSealed, seal as sealBytes } from '../core/aead.ts';
import type { Database } from '../db/database.ts';

/** Which record: the organisation and API key that sent the key, and the key itself (only its hash is stored). */
export interface IdempotencyScope {
  orgId: string;
  apiKeyId: string;
  key: string;
}

export interface StoredResponse {
  status: number;
  body: string;
}

export type Claim =
  | { kind: 'claimed'; owner: string }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'in_use'; retryAfterSec: number }
  | { kind: 'reused' };

const sha256 = (text: string) => createHash('sha256').update(text).digest();
const keyHash = (s: IdempotencyScope) => sha256(`fleet-idempotency-key\0${s.key}`).toString('hex');

/**
 * The response is stored encrypted (AES-256-GCM) under a key derived from the Idempotency-Key, which only the
 * client holds (the database keeps its hash under another derivation): some answers carry a secret shown once
 * (a new API key, a webhook signing secret), and a copy readable by anyone with database access for a day
 * would undo "only the key's hash is stored". Use random keys (a UUID): a guessable key protects nothing.
 */
function cipherKey(s: IdempotencyScope) {
  return sha256(`fleet-idempotency-response\0${s.orgId}\0${s.apiKeyId}\0${s.key}`);
}

/** base64 of iv (12 bytes), GCM tag (16) and ciphertext (core/aead.ts). */
function seal(s: IdempotencyScope, body: string): string {
  return sealBytes(cipherKey(s), body).toString('base64');
}

function open(s: IdempotencyScope, sealed: string): string {
  return openSealed(cipherKey(s), Buffer.from(sealed, 'base64')).toString('utf8');
}

/** Semantically equal JSON gives the same text: object keys sorted at every level, numbers as JSON writes them. */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return 'null';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.keys(value as object)
    .sort()
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
  return `{${entries.join(',')}}`;
}

/** What "the same request" means: method, path, query and body as canonical JSON. */
export function fingerprint(method: string, path: string, query: unknown, body: unknown): string {
  return sha256(canonicalJson([method, path, query ?? {}, body ?? null])).toString('hex');
}

const PK = `"orgId" = $1 AND "apiKeyId" = $2 AND "keyHash" = $3`;

/**
 * Claims a key in one statement of its own (committed at once, so every instance sees it): a new row, or the
 * takeover of a claim whose lease ran out (its request died before committing: nothing of it was kept).
 * Otherwise reports what the existing record says.
 */
export async function claimKey(
  db: Database,
  s: IdempotencyScope,
  request: { fingerprint: string; method: string; path: string; leaseMs: number },
): Promise<Claim> {
  const owner = randomBytes(12).toString('base64url');
  const params = [s.orgId, s.apiKeyId, keyHash(s)];
  for (let attempt = 0; attempt < 3; attempt++) {
    const [claimed] = await db.sql.query<{ owner: string }>(
      `INSERT INTO idempotency_keys ("orgId", "apiKeyId", "keyHash", fingerprint, method, path, owner, "lockedUntil")
       VALUES ($1, $2, $3, $4, $5, $6, $7, now() + $8 * interval '1 millisecond')
       ON CONFLICT ("orgId", "apiKeyId", "keyHash") DO UPDATE
         SET owner = EXCLUDED.owner, "lockedUntil" = EXCLUDED."lockedUntil", "createdAt" = now()
         WHERE idempotency_keys."completedAt" IS NULL AND idempotency_keys."lockedUntil" < now()
           AND idempotency_keys.fingerprint = EXCLUDED.fingerprint
       RETURNING owner`,
      [...params, request.fingerprint, request.method, request.path, owner, request.leaseMs],
    );
    if (claimed?.owner === owner) return { kind: 'claimed', owner };
    const [row] = await db.sql.query<{
      fingerprint: string;
      responseStatus: number | null;
      responseBody: string | null;
      leftMs: number | string | null;
    }>(
      `SELECT fingerprint, "responseStatus", "responseBody",
              GREATEST(0, EXTRACT(EPOCH FROM ("lockedUntil" - now())) * 1000) AS "leftMs"
       FROM idempotency_keys WHERE ${PK}`,
      params,
    );
    // Released (its first request failed with a 5xx) between the two statements: claim again.
    if (!row) continue;
    if (row.fingerprint !== request.fingerprint) return { kind: 'reused' };
    if (row.responseStatus !== null && row.responseBody !== null) {
      return { kind: 'replay', response: { status: row.responseStatus, body: open(s, row.responseBody) } };
    }
    return { kind: 'in_use', retryAfterSec: Math.max(1, Math.min(5, Math.ceil(Number(row.leftMs ?? 0) / 1000))) };
  }
  throw new Error('idempotency key could not be claimed');
}

/**
 * Records the response of the claim `owner` holds. Inside the ambient transaction this commits with the
 * change; false when the claim was lost (taken over after its lease), and then nothing may commit.
 */
export async function completeKey(
  db: Database,
  s: IdempotencyScope,
  owner: string,
  response: StoredResponse,
): Promise<boolean> {
  const rows = await db.sql.query(
    `UPDATE idempotency_keys
     SET "responseStatus" = $5, "responseBody" = $6, "completedAt" = now(), owner = NULL, "lockedUntil" = NULL
     WHERE ${PK} AND owner = $4 RETURNING 1`,
    [s.orgId, s.apiKeyId, keyHash(s), owner, response.status, seal(s, response.body)],
  );
  return rows.length === 1;
}

/** Frees a claim whose request failed without an answer to keep (a 5xx): the retry executes afresh. */
export async function releaseKey(db: Database, s: IdempotencyScope, owner: string): Promise<void> {
  await db.sql.query(`DELETE FROM idempotency_keys WHERE ${PK} AND owner = $4 AND "completedAt" IS NULL`, [
    s.orgId,
    s.apiKeyId,
    keyHash(s),
    owner,
  ]);
}

const CHUNK = 5_000;

/** Removes records older than `ttlHours` (running claims only once their lease is over), in chunks. */
export async function pruneIdempotencyKeys(db: Database, now: Date, ttlHours: number): Promise<{ keys: number }> {
  const cutoff = new Date(now.getTime() - ttlHours * 3600 * 1000);
  let keys = 0;
  for (;;) {
    const rows = await db.sql.query(
      `DELETE FROM idempotency_keys k USING (
         SELECT "orgId", "apiKeyId", "keyHash" FROM idempotency_keys
         WHERE "createdAt" < $1 AND ("lockedUntil" IS NULL OR "lockedUntil" < now()) LIMIT ${CHUNK}) old
       WHERE k."orgId" = old."orgId" AND k."apiKeyId" = old."apiKeyId" AND k."keyHash" = old."keyHash"
       RETURNING 1`,
      [cutoff],
    );
    keys += rows.length;
    if (rows.length < CHUNK) break;
  }
  return { keys };
}
