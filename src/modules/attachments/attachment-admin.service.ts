import { createHash } from 'node:crypto';
import { Transform } from 'node:stream';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import { createLocalStorage } from './attachment-local-storage.adapter.ts';
import { createS3Storage } from './attachment-s3-storage.adapter.ts';
import type { AttachmentStorage } from './attachment-storage-interface.adapter.ts';
import { createStorage } from './attachment-storage-from-config.adapter.ts';

const BATCH = 200;

interface Row {
  id: string;
  size: number;
  sha256: string | null;
  storageKey: string;
}

export interface Progress {
  (line: string): void;
}

/** Every row that names stored bytes, in id order, a batch at a time (keyset on the primary key). */
async function* rowsWithBytes(db: Database, where = ''): AsyncIterable<Row[]> {
  let after = '';
  for (;;) {
    const rows = await db.sql.query<Row>(
      `SELECT "id", "size", "sha256", "storageKey" FROM "attachments" WHERE "storageKey" IS NOT NULL AND "id" > $1 ${where} ORDER BY "id" LIMIT ${BATCH}`,
      [after],
    );
    if (rows.length === 0) return;
    yield rows;
    after = rows[rows.length - 1].id;
  }
}

/** sha256 of a stream's bytes as they pass. */
function hashing() {
  const hash = createHash('sha256');
  const stream = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
  return { stream, digest: () => hash.digest('hex') };
}

async function drainHash(storage: AttachmentStorage, key: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of await storage.read(key)) h.update(chunk as Buffer);
  return h.digest('hex');
}

/**
 * Operator commands over the attachment store (the admin CLI's `attachments check` and `attachments copy-to-s3`).
 * They read rows in id order and keep no state of their own, so an interrupted run is simply run again.
 */
export function createAttachmentAdmin(db: Database, config: Config) {
  return {
    /** Every row against the configured store: bytes missing, or of another size (or checksum, with verify). */
    async check(options: { verify: boolean; progress: Progress }) {
      const storage = createStorage(config.attachments);
      const missing: string[] = [];
      const mismatched: string[] = [];
      let checked = 0;
      try {
        for await (const rows of rowsWithBytes(db)) {
          for (const row of rows) {
            const size = await storage.size(row.storageKey);
            if (size === null) missing.push(row.id);
            else if (size !== row.size) mismatched.push(row.id);
            else if (options.verify && row.sha256 && (await drainHash(storage, row.storageKey)) !== row.sha256)
              mismatched.push(row.id);
          }
          checked += rows.length;
          options.progress(`  checked ${checked} (${missing.length} missing, ${mismatched.length} mismatched)`);
        }
      } finally {
        await storage.close();
      }
      return { storage: storage.kind, checked, missing, mismatched };
    },

    /**
     * Copies the bytes of every row on local storage to the bucket, under the key the bucket store gives it;
     * an object already there with the right size is skipped (so a run resumes where the last one stopped), and
     * each copy is checked against the row's checksum. With `switchKeys` the copied rows then name their bucket
     * objects: run it once the servers are stopped, then start them with ATTACHMENTS_STORAGE=s3.
     */
    async copyToS3(options: { switchKeys: boolean; progress: Progress }) {
      if (!config.attachments.s3.bucket)
        throw new Error('S3_BUCKET (and S3_ENDPOINT, S3_REGION as needed) must be set');
      const local = createLocalStorage(config.attachments.dir);
      const bucket = createS3Storage(config.attachments.s3);
      const result = { copied: 0, skipped: 0, switched: 0, failed: [] as { id: string; reason: string }[] };
      const [{ total }] = await db.sql.query<{ total: number }>(
        `SELECT count(*)::int AS total FROM "attachments" WHERE "storageKey" LIKE 'objects/%'`,
      );
      try {
        for await (const rows of rowsWithBytes(db, `AND "storageKey" LIKE 'objects/%'`)) {
          const done: Row[] = [];
          for (const row of rows) {
            const target = bucket.keyFor(row.id, row.sha256 ?? '');
            try {
              if ((await bucket.size(target)) === row.size) {
                result.skipped++;
                done.push(row);
                continue;
              }
              const h = hashing();
              const source = await local.read(row.storageKey);
              const staged = await bucket.stage(source.pipe(h.stream), row.id);
              if (row.sha256 && h.digest() !== row.sha256) {
                await staged.discard();
                throw new Error('the local bytes do not match the recorded sha256');
              }
              result.copied++;
              done.push(row);
            } catch (err) {
              result.failed.push({ id: row.id, reason: (err as Error).message });
            }
          }
          if (options.switchKeys && done.length) {
            // Only rows still naming the local key they were copied from (a row deleted or changed meanwhile is left).
            const switched = await db.sql.query(
              `UPDATE "attachments" AS a SET "storageKey" = $1 || a."id", "updatedAt" = now()
               FROM unnest($2::text[], $3::text[]) AS c(id, key) WHERE a."id" = c.id AND a."storageKey" = c.key RETURNING a."id"`,
              [config.attachments.s3.prefix, done.map((r) => r.id), done.map((r) => r.storageKey)],
            );
            result.switched += switched.length;
          }
          const seen = result.copied + result.skipped + result.failed.length;
          options.progress(
            `  ${seen}/${total} rows: ${result.copied} copied, ${result.skipped} already there, ${result.failed.length} failed`,
          );
        }
      } finally {
        await bucket.close();
      }
      return result;
    },
  };
}
