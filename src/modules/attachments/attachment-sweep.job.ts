import type { Database } from '../../db/database.ts';
import { transaction } from '../../db/transaction.ts';
import type { AttachmentStorage } from './attachment-storage-interface.adapter.ts';
import { keyInUse, lockKey } from './attachments.repository.ts';

/** Uploads not completed within this long are removed, row and bytes. */
export const PENDING_TTL_MS = 24 * 3600 * 1000;
const BATCH = 200;

export interface SweepResult {
  pendingRemoved: number;
  orphansRemoved: number;
}

/** The key whose row a stored object belongs to: its own, or the content's for a thumbnail. */
function ownerKey(storage: AttachmentStorage, key: string): string | null {
  if (key.startsWith('tmp/')) return null;
  for (const candidate of [key.replace(/\.thumb\.webp$/, ''), key.replace(/\.webp$/, '')])
    if (candidate !== key && storage.thumbnailKey(candidate) === key) return candidate;
  return key;
}

/**
 * Removes (1) PENDING uploads older than 24 h with their bytes, and (2) stored objects no row names once they
 * are older than the grace period: bytes of a crash between the write and the commit, staging files, and the
 * bytes of attachments whose subject was deleted (the database trigger removed their rows). Each removal holds
 * the key's lock and checks again, so bytes being committed with a new row are never taken.
 */
export async function sweepAttachments(
  db: Database,
  storage: AttachmentStorage,
  now: Date,
  graceSec: number,
): Promise<SweepResult> {
  let pendingRemoved = 0;
  for (;;) {
    const stale = await db.prisma.attachment.findMany({
      where: { status: 'PENDING', createdAt: { lt: new Date(now.getTime() - PENDING_TTL_MS) } },
      select: { id: true },
      take: BATCH,
    });
    for (const { id } of stale) if (await removeRow(db, storage, id)) pendingRemoved++;
    if (stale.length < BATCH) break;
  }

  let orphansRemoved = 0;
  const cutoff = now.getTime() - graceSec * 1000;
  for await (const { key, modifiedAt } of storage.list()) {
    if (modifiedAt.getTime() > cutoff) continue;
    const owner = ownerKey(storage, key);
    const removed = await transaction(db, async (tx) => {
      if (owner) {
        await lockKey(tx, owner);
        if (await keyInUse(tx, owner)) return false;
      }
      await storage.remove(key);
      return true;
    });
    if (removed) orphansRemoved++;
  }
  return { pendingRemoved, orphansRemoved };
}

/** Deletes one row and, when it was the last to name them, its bytes. */
export async function removeRow(db: Database, storage: AttachmentStorage, id: string): Promise<boolean> {
  return transaction(db, async (tx) => {
    const row = await tx.attachment.findUnique({ where: { id } });
    if (!row) return false;
    if (row.storageKey) await lockKey(tx, row.storageKey);
    // A concurrent delete (another request, the sweep) may have won while this waited for the key's lock.
    const { count } = await tx.attachment.deleteMany({ where: { id } });
    if (count === 0) return false;
    if (row.storageKey && !(storage.sharedKeys && (await keyInUse(tx, row.storageKey)))) {
      await storage.remove(row.storageKey);
      await storage.remove(storage.thumbnailKey(row.storageKey)).catch(() => undefined);
    }
    return true;
  });
}
