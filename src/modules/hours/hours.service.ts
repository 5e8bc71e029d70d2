import { ensureMonths } from '../../db/partitions.ts';
import { sqlTransaction, transaction } from '../../db/transaction.ts';
import type { RequestContext } from '../../core/context.ts';
import { conflict, notFound, ValidationError } from '../../core/errors.ts';
import { batchSummary, readBatchEnvelope, validateEntries, type BatchResultOf } from '../../core/batch.ts';
import { decodeCursor, paginate, timeIdCursor } from '../../core/pagination.ts';
import { queueRenewalHeadsUps } from '../notifications/notifications.repository.ts';
import { isUniqueViolation } from '../shared/unique-violation.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import { findLogByKey, listMeterLogs, lockMeteredAsset } from './hours.repository.ts';
import { applyReading } from '../service-reminders/service-reminders.operations.ts';
import {
  API_ORIGIN,
  openPmFlagIfDue,
  recordReading,
  type ReadingOrigin,
  type RecordedReading,
} from './hours.operations.ts';
import { recordAssetReadings, type BatchReading, type HoursBatchRecorder } from './hours-batch.operations.ts';
import { recordReadingOptimistic, recordReadingSql } from './hours-sql.operations.ts';
import {
  CreateHoursBody,
  IDEMPOTENCY_KEY_MAX,
  toHoursLog,
  type CreateHoursInput,
  type ListHoursInput,
  type HoursBatchResponse,
} from './hours.schemas.ts';

export const HOURS_BATCH_CAP = 100;

type BatchResult = BatchResultOf<typeof HoursBatchResponse>;

const created = ({ log, replayed }: RecordedReading) => ({
  logId: log.id,
  autoFlagId: log.autoFlagId,
  delta: log.delta,
  reviewStatus: log.reviewStatus,
  replayed,
});

export function createHoursService({ db, background }: Pick<ServiceDeps, 'db' | 'background'>) {
  const findByKey = (ctx: RequestContext, key: string) => findLogByKey(db.sql, ctx.orgId, key);

  /** One reading in its own transaction; a lost race on the idempotency key returns the winner's row. */
  async function record(
    ctx: RequestContext,
    input: CreateHoursInput,
    key: string | null,
    origin: ReadingOrigin = API_ORIGIN,
  ): Promise<RecordedReading> {
    // An import's keys are new but after a restart: the unique index settles a repeat (caught below) without a read.
    if (key && origin.source !== 'import') {
      const existing = await findByKey(ctx, key);
      if (existing) return { log: existing, replayed: true };
    }
    // A reading stamped in a month without a partition yet (backdated) creates it first.
    await ensureMonths(db, 'meter_logs', [input.loggedAt ?? new Date()]);
    try {
      // Cheapest path that applies: without the lock when the asset did not change under us, then under
      // the asset lock in raw SQL, then through Prisma for a reading that opens an AUTO_PM flag.
      return (
        (await recordReadingOptimistic(db.sql, ctx, input, key, origin)) ??
        (await sqlTransaction(db, (tx) => recordReadingSql(tx, ctx, input, key, origin))) ??
        (await transaction(db, (tx) => recordReading(tx, ctx, input, key, origin)))
      );
    } catch (err) {
      if (!key || !isUniqueViolation(err)) throw err;
      const winner = await findByKey(ctx, key);
      if (!winner) throw err;
      return { log: winner, replayed: true };
    }
  }

  /** Renewal heads-ups are side work: after commit, in the background, never failing the reading. */
  function afterReadings(ctx: RequestContext, assetIds: string[]) {
    for (const assetId of new Set(assetIds)) {
      background.run('renewal-heads-ups', { orgId: ctx.orgId, assetId }, () =>
        queueRenewalHeadsUps(db.prisma, { orgId: ctx.orgId, assetId }),
      );
    }
  }

  /** Readings of one asset in time order, in one transaction: what POST /hours would do with each in turn. */
  async function recordBatch(ctx: RequestContext, assetId: string, readings: BatchReading[], origin: ReadingOrigin) {
    const now = new Date();
    await ensureMonths(
      db,
      'meter_logs',
      readings.map((r) => r.input.loggedAt ?? now),
    );
    return transaction(db, (tx) => recordAssetReadings(tx, ctx, assetId, readings, origin, now));
  }

  return {
    /** Many readings of one asset through the POST /hours rules, from another origin (imports). */
    recordBatch: recordBatch as HoursBatchRecorder,

    async list(ctx: RequestContext, query: ListHoursInput) {
      const after = timeIdCursor(decodeCursor(query.cursor, 2));
      const rows = await listMeterLogs(db.sql, ctx.orgId, query, after);
      const { page, nextCursor } = paginate(rows, query.limit, (r) => [r.loggedAt.toISOString(), r.id]);
      return { ok: true as const, hoursLogs: page.map(toHoursLog), nextCursor };
    },

    async get(ctx: RequestContext, id: string) {
      const log = await db.prisma.meterLog.findFirst({ where: { id, orgId: ctx.orgId } });
      if (!log) throw notFound('Hours log');
      const asset = await db.prisma.asset.findUniqueOrThrow({
        where: { id: log.assetId },
        select: { id: true, nickname: true, meterType: true, meterUnit: true },
      });
      return { ok: true as const, hoursLog: { ...toHoursLog(log), asset } };
    },

    async create(ctx: RequestContext, input: CreateHoursInput, headerKey: string | undefined) {
      if (headerKey !== undefined && (headerKey.length === 0 || headerKey.length > IDEMPOTENCY_KEY_MAX)) {
        throw new ValidationError({ 'Idempotency-Key': `must be 1-${IDEMPOTENCY_KEY_MAX} characters` });
      }
      const result = await record(ctx, input, headerKey ?? input.clientMutationId ?? null);
      if (result.renewalDue) afterReadings(ctx, [result.log.assetId]);
      return { ok: true as const, ...created(result) };
    },

    /** Entries run in input order, each in its own transaction: one failing entry never affects another. */
    async createBatch(ctx: RequestContext, body: unknown) {
      const entries = readBatchEnvelope(body, HOURS_BATCH_CAP);
      const { valid, failures } = validateEntries(entries, CreateHoursBody);
      const results: BatchResult[] = [...failures];
      const touched: string[] = [];
      for (const { index, data } of valid) {
        try {
          const result = await record(ctx, data, data.clientMutationId ?? null);
          if (result.renewalDue) touched.push(result.log.assetId);
          results.push({ index, ok: true, ...created(result) });
        } catch (err) {
          if (!(err instanceof ValidationError)) throw err;
          results.push({ index, ok: false, error: 'validation_failed', fieldErrors: err.fieldErrors });
        }
      }
      results.sort((a, b) => a.index - b.index);
      afterReadings(ctx, touched);
      return { ok: true as const, results, summary: batchSummary(entries.length, results) };
    },

    /**
     * The manager decision on a log awaiting review. Approving the asset's latest reading also applies
     * the PM check the held reading skipped. Neither decision rewrites the meter: corrections are logged
     * as new readings, so deltas keep adding up to the meter's real movement.
     */
    async review(ctx: RequestContext, id: string, decision: 'APPROVED' | 'REJECTED') {
      return transaction(db, async (tx) => {
        const log = await tx.meterLog.findFirst({ where: { id, orgId: ctx.orgId } });
        if (!log) throw notFound('Hours log');
        const asset = await lockMeteredAsset(tx, ctx.orgId, log.assetId);
        const { count } = await tx.meterLog.updateMany({
          where: { id, loggedAt: log.loggedAt, reviewStatus: 'PENDING' },
          data: { reviewStatus: decision, reviewedById: ctx.actorId, reviewedAt: new Date() },
        });
        if (count === 0)
          throw conflict('not_pending_review', `This log is not awaiting review (reviewStatus ${log.reviewStatus})`);
        let autoFlagId: string | null = null;
        const latest =
          asset &&
          asset.meterType !== 'NONE' &&
          asset.lastMeterReading === log.hoursReading &&
          asset.lastMeterAt?.getTime() === log.loggedAt.getTime();
        if (decision === 'APPROVED' && asset && latest) {
          autoFlagId = await openPmFlagIfDue(tx, ctx, asset, log.hoursReading);
          if (autoFlagId)
            await tx.meterLog.update({ where: { id_loggedAt: { id, loggedAt: log.loggedAt } }, data: { autoFlagId } });
          // Service reminders follow accepted readings: the approved one moves them now.
          await applyReading(tx, ctx, asset.id, log);
        }
        return { ok: true as const, logId: id, reviewStatus: decision, autoFlagId };
      });
    },
  };
}

export type HoursService = ReturnType<typeof createHoursService>;
