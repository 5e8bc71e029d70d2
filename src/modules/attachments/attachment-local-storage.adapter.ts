import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { AttachmentStorage, StagedObject } from './attachment-storage-interface.adapter.ts';

const STAGING = 'tmp';
/** Read and write in 256 KiB chunks: a quarter of the system calls of the 64 KiB default, little memory each. */
const CHUNK = 256 * 1024;

/** fsync of a file's data, through a descriptor of its own (the writer's is closed by then). */
async function syncFile(file: string): Promise<void> {
  const handle = await open(file, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** fsync of a directory makes a rename in it durable; some file systems refuse it, which is no loss there. */
async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r').catch(() => null);
  if (!handle) return;
  await handle.sync().catch(() => undefined);
  await handle.close();
}

/**
 * Content-addressed files under `root`: objects/<first two hex>/<sha256>, thumbnails beside as <sha256>.webp.
 * Bytes are written to root/tmp, fsynced, then renamed into place, so a reader never sees half a file and a
 * crash leaves only a staging file (removed by the sweep). The fsync is separate from the write so that it can
 * overlap the row's database work (persist()).
 */
export function createLocalStorage(root: string): AttachmentStorage {
  const abs = (key: string) => path.join(root, ...key.split('/'));

  async function moveInto(from: string, key: string) {
    const to = abs(key);
    await mkdir(path.dirname(to), { recursive: true });
    await rename(from, to);
    await syncDir(path.dirname(to));
  }

  return {
    kind: 'local',
    sharedKeys: true,
    keyFor: (_id, sha256) => `objects/${sha256.slice(0, 2)}/${sha256}`,
    thumbnailKey: (key) => `${key}.webp`,

    async stage(source: Readable): Promise<StagedObject> {
      await mkdir(path.join(root, STAGING), { recursive: true });
      const temp = path.join(root, STAGING, randomUUID());
      const out = createWriteStream(temp, { flags: 'wx', highWaterMark: CHUNK });
      try {
        await pipeline(source, out);
      } catch (err) {
        await rm(temp, { force: true });
        throw err;
      }
      let synced: Promise<void> | undefined;
      const persist = () => (synced ??= syncFile(temp));
      return {
        persist,
        commit: async (key) => {
          await persist();
          await moveInto(temp, key);
        },
        // A sync still running holds its own descriptor; the name can go now.
        discard: async () => {
          await synced?.catch(() => undefined);
          await rm(temp, { force: true });
        },
      };
    },

    async read(key, range) {
      const stream = createReadStream(abs(key), { highWaterMark: CHUNK, ...(range ?? {}) });
      // Surfaces a missing file as a rejection here rather than as an error mid-response.
      await new Promise<void>((resolve, reject) => {
        stream.once('open', () => resolve());
        stream.once('error', reject);
      });
      return stream;
    },

    async size(key) {
      const s = await stat(abs(key)).catch(() => null);
      return s?.isFile() ? s.size : null;
    },

    async put(key, bytes) {
      await mkdir(path.join(root, STAGING), { recursive: true });
      const temp = path.join(root, STAGING, randomUUID());
      const handle = await open(temp, 'wx');
      try {
        await handle.writeFile(bytes);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await moveInto(temp, key);
    },

    async remove(key) {
      await rm(abs(key), { force: true });
    },

    async *list() {
      for (const area of ['objects', STAGING]) {
        const base = path.join(root, area);
        const entries = await readdir(base, { recursive: true, withFileTypes: true }).catch(() => []);
        for (const entry of entries) {
          if (!entry.isFile()) continue;
          const full = path.join(entry.parentPath, entry.name);
          const s = await stat(full).catch(() => null);
          if (s) yield { key: path.relative(root, full).split(path.sep).join('/'), modifiedAt: s.mtime };
        }
      }
    },

    async close() {},
  };
}
