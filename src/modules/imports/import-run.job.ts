// Imports run in the background of the process that accepted them, under a lease on the import row: renewed while
// running, so that an import whose process stopped is found by the resume sweep once its lease lapses and either
// resumes (its rows are stored) or ends failed with the reason; never half-written.
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { ServiceDeps } from '../../service-deps.ts';
import type { Import } from '../../generated/prisma/client.ts';
import type { HoursBatchRecorder } from '../hours/hours-batch.operations.ts';
import type { AttachmentStorage } from '../attachments/attachment-storage-interface.adapter.ts';
import { recheck, writeRows } from './import-commit.operations.ts';
import { completeImport, failImport, markValidated } from './import-lifecycle.operations.ts';
import { handlerOf } from './import-registry.operations.ts';
import { BATCH_ROWS, ImportFileError, readFileRows, validateRows } from './import-validate.operations.ts';
import { claimImport, countActions, lapsedImports, renewImportLease } from './imports.repository.ts';

/** Seconds a running import's lease lasts; renewed at a third of it. */
export const IMPORT_LEASE_SEC = 60;

type Deps = Pick<ServiceDeps, 'db' | 'log' | 'background' | 'config' | 'billing'>;

export function createImportRunner(
  { db, log, background, config, billing }: Deps,
  hours: HoursBatchRecorder,
  storage: AttachmentStorage,
) {
  const owner = `${config.instanceId}:${randomUUID().slice(0, 8)}`;
  let stopping = false;
  const running = new Set<string>();

  /** Runs `work` on the import while holding its lease; keepGoing() turns false on stop or a lost lease. */
  async function leased(id: string, work: (keepGoing: () => boolean) => Promise<void>) {
    if (running.has(id)) return;
    running.add(id);
    let lost = false;
    const timer = setInterval(
      () => {
        void renewImportLease(db, id, owner, IMPORT_LEASE_SEC).then(
          (held) => (lost ||= !held),
          (err: unknown) => log.warn({ err, importId: id }, 'import lease renewal failed'),
        );
      },
      (IMPORT_LEASE_SEC * 1000) / 3,
    );
    try {
      await work(() => !stopping && !lost);
    } finally {
      clearInterval(timer);
      running.delete(id);
    }
  }

  const load = (id: string) => db.prisma.import.findUniqueOrThrow({ where: { id } });

  async function validate(imp: Import, keepGoing: () => boolean) {
    const handler = handlerOf(imp.type)!;
    const counts = await validateRows(db, imp, handler, keepGoing);
    if (counts) await markValidated(db, imp, counts);
  }

  async function commit(id: string, keepGoing: () => boolean) {
    let imp = await load(id);
    const handler = handlerOf(imp.type)!;
    if (imp.commitPhase === 'check') {
      const changed = await recheck(db, imp, handler, keepGoing);
      if (changed === 'stopped') return;
      if (changed) return failImport(db, imp, changed);
      const counts = await countActions(db.sql, imp.orgId, imp.id);
      imp = await db.prisma.import.update({
        where: { id },
        data: { commitPhase: 'write', rowsDone: 0, rowsTotal: counts.create + counts.update },
      });
    }
    if (await writeRows({ db, hours, billing }, imp, handler, keepGoing)) await completeImport(db, imp);
  }

  /** Any failure not foreseen ends the import failed rather than leaving it in progress. */
  async function guarded(imp: Pick<Import, 'id' | 'orgId' | 'type'>, work: () => Promise<void>) {
    try {
      await work();
    } catch (err) {
      if (err instanceof ImportFileError) return failImport(db, imp, err.message);
      log.error({ err, importId: imp.id }, 'import failed');
      await failImport(db, imp, 'internal error while running the import (see the server log)').catch(() => {});
    }
  }

  function launch(id: string, work: (imp: Import, keepGoing: () => boolean) => Promise<void>) {
    background.run('import-run', { importId: id }, () =>
      leased(id, async (keepGoing) => {
        const imp = await load(id);
        await guarded(imp, () => work(imp, keepGoing));
      }),
    );
  }

  async function readAttachment(imp: Import, keepGoing: () => boolean) {
    const attachment = await db.prisma.attachment.findFirst({
      where: { id: imp.uploadAttachmentId ?? '', orgId: imp.orgId, status: 'READY' },
    });
    if (!attachment?.storageKey) throw new ImportFileError('the uploaded attachment is gone');
    await db.prisma.importRow.deleteMany({ where: { orgId: imp.orgId, importId: imp.id } });
    const stream = await storage.read(attachment.storageKey);
    await readFileRows(db, imp, handlerOf(imp.type)!, stream as AsyncIterable<Buffer>, keepGoing);
  }

  /** Reads an attachment's bytes into the import's rows and validates them, in the background. */
  function acceptAttachment(imp: Import) {
    launch(imp.id, async (fresh, keepGoing) => {
      await readAttachment(fresh, keepGoing);
      await validate(await load(fresh.id), keepGoing);
    });
  }

  function startCommit(id: string) {
    launch(id, (imp, keepGoing) => commit(imp.id, keepGoing));
  }

  return {
    owner,

    /** Reads an uploaded file into the import's rows in the request, then validates in the background. */
    async acceptUpload(imp: Import, source: Readable) {
      let rows = 0;
      await leased(imp.id, (keepGoing) =>
        guarded(imp, async () => {
          rows = await readFileRows(db, imp, handlerOf(imp.type)!, source, keepGoing);
          // A file of one batch is validated before the answer: its status is final when the client first looks.
          if (rows <= BATCH_ROWS) await validate(await load(imp.id), keepGoing);
        }),
      );
      if (rows > BATCH_ROWS) launch(imp.id, (fresh, keepGoing) => validate(fresh, keepGoing));
    },

    acceptAttachment,
    startCommit,

    /** The resume sweep: imports in progress whose process stopped are taken over. */
    async tick() {
      if (stopping) return 0;
      const lapsed = await lapsedImports(db, 4);
      let resumed = 0;
      for (const { id } of lapsed) {
        if (!(await claimImport(db, id, owner, IMPORT_LEASE_SEC))) continue;
        resumed++;
        const imp = await load(id);
        if (imp.status === 'committing') startCommit(id);
        else if (imp.readComplete) launch(id, (fresh, keepGoing) => validate(fresh, keepGoing));
        else if (imp.source === 'attachment') acceptAttachment(imp);
        else await failImport(db, imp, 'the server stopped while the file was being uploaded; upload the file again');
      }
      return resumed;
    },

    stop() {
      stopping = true;
    },
  };
}

export type ImportRunner = ReturnType<typeof createImportRunner>;
