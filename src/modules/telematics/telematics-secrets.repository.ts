import type { Database } from '../../db/database.ts';
import { sqlTransaction } from '../../db/transaction.ts';
import { SecretUnavailableError, type SecretBox } from '../../security/secret-box.ts';

/** What ties a connection's sealed secret to it (the same subject the sync opens it with). */
export const secretSubject = (connectionId: string) => `telematics:${connectionId}`;

/**
 * Re-encrypts telematics connection secrets not under the first key (`admin secrets rotate-key`), `batch` rows
 * per transaction over rows locked with SKIP LOCKED, written with a compare-and-set so a secret replaced meanwhile
 * is never overwritten. Rows that cannot be opened are reported and skipped.
 */
export async function resealTelematicsSecrets(db: Database, box: SecretBox, batch = 100) {
  const failed: { connectionId: string; reason: string }[] = [];
  let resealed = 0;
  for (;;) {
    const done = await sqlTransaction(db, async (tx) => {
      const rows = await tx.query<{ id: string; secretCiphertext: string }>(
        `SELECT id, "secretCiphertext" FROM telematics_connections
         WHERE "secretCiphertext" IS NOT NULL AND split_part("secretCiphertext", ':', 2) <> $1
           AND id <> ALL($2::text[])
         ORDER BY id LIMIT $3 FOR UPDATE SKIP LOCKED`,
        [box.primaryKeyId, failed.map((f) => f.connectionId), batch],
      );
      for (const row of rows) {
        try {
          const secret = box.openSecret(secretSubject(row.id), 'current', row.secretCiphertext);
          const written = await tx.query(
            `UPDATE telematics_connections SET "secretCiphertext" = $2 WHERE id = $1 AND "secretCiphertext" = $3 RETURNING 1`,
            [row.id, box.sealSecret(secretSubject(row.id), 'current', secret), row.secretCiphertext],
          );
          resealed += written.length;
        } catch (err) {
          if (!(err instanceof SecretUnavailableError)) throw err;
          failed.push({ connectionId: row.id, reason: err.message });
        }
      }
      return rows.length;
    });
    if (done === 0) return { resealed, failed };
  }
}
