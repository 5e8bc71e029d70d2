import type { Database } from '../../db/database.ts';
import { sqlTransaction } from '../../db/transaction.ts';
import { SecretUnavailableError, type SecretBox, type StoredSecrets } from '../../security/secret-box.ts';
import type { WebhookSubscription } from '../../generated/prisma/client.ts';

type Row = StoredSecrets & { id: string };
const COLUMNS = `id, secret, "secretCiphertext", "previousSecret", "previousSecretCiphertext", "previousSecretExpiresAt"`;

/** Rows a reseal pass works on: plaintext left by an older release, or (rotate-key) not under the first key. */
export type ResealScope = 'plaintext' | 'not-primary';

export interface ResealProgress {
  /** Rows to do when the pass started. */
  total: number;
  resealed: number;
  /** Rows that could not be opened (their key is missing or the ciphertext does not authenticate). */
  failed: { subscriptionId: string; reason: string }[];
  /** Rows still to do that other transactions held when the pass ended (run it again). */
  remaining: number;
}

/** Storage of webhook signing secrets: rotation through the API, start-up sealing and key rotation. */
export function createWebhookSecretStore(db: Database, box: SecretBox) {
  function where(scope: ResealScope): { sql: string; params: unknown[] } {
    const plaintext = `(secret IS NOT NULL OR "previousSecret" IS NOT NULL OR "secretCiphertext" IS NULL)`;
    if (scope === 'plaintext') return { sql: plaintext, params: [] };
    // The key id is the second field of v1:<key id>:<sealed>.
    return {
      sql: `(${plaintext} OR split_part("secretCiphertext", ':', 2) <> $1
             OR ("previousSecretCiphertext" IS NOT NULL AND split_part("previousSecretCiphertext", ':', 2) <> $1))`,
      params: [box.primaryKeyId],
    };
  }

  /**
   * One batch: up to `limit` rows locked with SKIP LOCKED (another pass, instance or rotation holds the rest),
   * rewritten under the first key in the same transaction; the UPDATE compares the columns it read as well
   * (compare-and-set), so nothing written meanwhile is ever overwritten. Returns what it did.
   */
  async function resealBatch(scope: ResealScope, limit: number, skip: string[]) {
    const w = where(scope);
    return sqlTransaction(db, async (tx) => {
      const rows = await tx.query<Row>(
        `SELECT ${COLUMNS} FROM webhook_subscriptions
         WHERE ${w.sql} AND id <> ALL($${w.params.length + 1}::text[])
         ORDER BY id LIMIT $${w.params.length + 2} FOR UPDATE SKIP LOCKED`,
        [...w.params, skip, limit],
      );
      const failed: ResealProgress['failed'] = [];
      const updates = [];
      const now = new Date();
      for (const row of rows) {
        try {
          const expired = row.previousSecretExpiresAt === null || new Date(row.previousSecretExpiresAt) <= now;
          const { current, previous } = box.plaintexts(
            row.id,
            expired ? { ...row, previousSecretExpiresAt: null } : row,
          );
          const sealed = box.sealed(row.id, { current, previous: expired ? null : previous });
          updates.push({ id: row.id, ct: sealed.secretCiphertext, pct: sealed.previousSecretCiphertext, old: row });
        } catch (err) {
          if (!(err instanceof SecretUnavailableError)) throw err;
          failed.push({ subscriptionId: row.id, reason: err.message });
        }
      }
      let resealed = 0;
      if (updates.length > 0) {
        const written = await tx.query(
          `UPDATE webhook_subscriptions s SET secret = NULL, "previousSecret" = NULL,
             "secretCiphertext" = u.ct, "previousSecretCiphertext" = u.pct
           FROM json_to_recordset($1::json) AS u(id text, ct text, pct text, s text, ps text, oct text, opct text)
           WHERE s.id = u.id AND s.secret IS NOT DISTINCT FROM u.s AND s."previousSecret" IS NOT DISTINCT FROM u.ps
             AND s."secretCiphertext" IS NOT DISTINCT FROM u.oct AND s."previousSecretCiphertext" IS NOT DISTINCT FROM u.opct
           RETURNING 1`,
          [
            JSON.stringify(
              updates.map((u) => ({
                id: u.id,
                ct: u.ct,
                pct: u.pct,
                s: u.old.secret,
                ps: u.old.previousSecret,
                oct: u.old.secretCiphertext,
                opct: u.old.previousSecretCiphertext,
              })),
            ),
          ],
        );
        resealed = written.length;
      }
      return { picked: rows.length, resealed, failed };
    });
  }

  async function count(scope: ResealScope, skip: string[]): Promise<number> {
    const w = where(scope);
    const [row] = await db.sql.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_subscriptions WHERE ${w.sql} AND id <> ALL($${w.params.length + 1}::text[])`,
      [...w.params, skip],
    );
    return row.n;
  }

  return {
    /**
     * Rewrites every row of the scope under the first key, `batch` rows per transaction, until none is left
     * (rows that cannot be opened are reported and skipped). Resumable: it only ever looks at rows still to do.
     * Rows held by other transactions are waited for a little (`waitMs`), then left in `remaining`.
     */
    async reseal(
      scope: ResealScope,
      {
        batch = 100,
        waitMs = 5_000,
        onProgress,
      }: { batch?: number; waitMs?: number; onProgress?: (p: ResealProgress) => void } = {},
    ): Promise<ResealProgress> {
      const progress: ResealProgress = { total: await count(scope, []), resealed: 0, failed: [], remaining: 0 };
      const skip: string[] = [];
      const waitUntil = () => Date.now() + waitMs;
      let deadline = waitUntil();
      for (;;) {
        const done = await resealBatch(scope, batch, skip);
        progress.resealed += done.resealed;
        progress.failed.push(...done.failed);
        skip.push(...done.failed.map((f) => f.subscriptionId));
        if (done.picked > 0) {
          onProgress?.({ ...progress });
          deadline = waitUntil();
          continue;
        }
        progress.remaining = await count(scope, skip);
        if (progress.remaining === 0 || Date.now() > deadline) return progress;
        await new Promise((r) => setTimeout(r, 100));
      }
    },

    /**
     * Replaces the secret under the row lock: the new one sealed as current, and (with an overlap) the
     * replaced one sealed again as previous, which needs it opened: a row whose secret cannot be opened can
     * only be rotated without overlap. Null when the subscription is not the organisation's.
     */
    async rotate(orgId: string, id: string, secret: string, expiresAt: Date | null) {
      return sqlTransaction(db, async (tx) => {
        const [row] = await tx.query<Row>(
          `SELECT ${COLUMNS} FROM webhook_subscriptions WHERE id = $1 AND "orgId" = $2 FOR UPDATE`,
          [id, orgId],
        );
        if (!row) return null;
        const previous =
          expiresAt === null ? null : box.plaintexts(id, { ...row, previousSecretExpiresAt: null }).current;
        const sealed = box.sealed(id, { current: secret, previous });
        const [updated] = await tx.query<WebhookSubscription>(
          `UPDATE webhook_subscriptions SET secret = NULL, "previousSecret" = NULL,
             "secretCiphertext" = $2, "previousSecretCiphertext" = $3, "previousSecretExpiresAt" = $4::timestamptz,
             "updatedAt" = now()
           WHERE id = $1 RETURNING *`,
          [id, sealed.secretCiphertext, sealed.previousSecretCiphertext, expiresAt?.toISOString() ?? null],
        );
        return updated;
      });
    },
  };
}

export type WebhookSecretStore = ReturnType<typeof createWebhookSecretStore>;
