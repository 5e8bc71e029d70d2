// One page of a feed into the database: machines upserted, matched, readings through the meter pipeline, fault
// flags. A page commits on its own: the machines, the cheap readings and the run's counters in one raw transaction;
// then, when the page has any, the readings that need the full path (an AUTO_PM flag, a service reminder) and the
// fault flags in a second one. Both are safe to redo: a repeated reading is skipped and a fault flag is keyed.
import { ensureMonths } from '../../db/partitions.ts';
import type { Database } from '../../db/database.ts';
import { sqlTransaction, transaction } from '../../db/transaction.ts';
import type { RequestContext } from '../../core/context.ts';
import { ValidationError } from '../../core/errors.ts';
import { recordReading, type ReadingOrigin } from '../hours/hours.operations.ts';
import type { CreateHoursInput } from '../hours/hours.schemas.ts';
import { recordReadingSql } from '../hours/hours-sql.operations.ts';
import { lockMeteredAsset } from '../hours/hours.repository.ts';
import { insertFlag } from '../flags/flags.operations.ts';
import type { FeedEquipment, FeedFault } from './telematics-feed.rules.ts';
import {
  decideReading,
  faultDedupeKey,
  faultNote,
  faultSeverity,
  matchAsset,
  matchIndex,
  matchKeys,
} from './telematics.rules.ts';
import { knownMachines, lockMeters, matchCandidates, upsertMachines } from './telematics.repository.ts';

export interface RunCounters {
  pages: number;
  equipmentSeen: number;
  matched: number;
  unmatched: number;
  readingsCreated: number;
  readingsSkipped: number;
  faultsOpened: number;
  machineErrors: number;
  errorSamples: string[];
}

export const emptyCounters = (): RunCounters => ({
  pages: 0,
  equipmentSeen: 0,
  matched: 0,
  unmatched: 0,
  readingsCreated: 0,
  readingsSkipped: 0,
  faultsOpened: 0,
  machineErrors: 0,
  errorSamples: [],
});

const MAX_SAMPLES = 20;

export interface PageRun {
  runId: string;
  connectionId: string;
  ctx: RequestContext;
  counters: RunCounters;
  /** Keys read earlier in this run: a machine listed twice keeps its first listing. */
  seen: Set<string>;
}

function machineError(run: PageRun, key: string | null, message: string) {
  run.counters.machineErrors++;
  if (run.counters.errorSamples.length < MAX_SAMPLES)
    run.counters.errorSamples.push(`${key ?? '(no PIN, serial number or EquipmentID)'}: ${message}`.slice(0, 300));
}

type Keyed = FeedEquipment & { key: string };

const readingInput = (assetId: string, hoursReading: number, loggedAt: Date): CreateHoursInput => ({
  assetId,
  hoursReading,
  loggedAt,
  state: null,
  note: null,
  loggedByDeviceId: null,
});

/** The machines of the page worth keeping: keyed, not seen before in the run; errors counted. */
function admit(run: PageRun, equipment: FeedEquipment[]): Keyed[] {
  const kept: Keyed[] = [];
  for (const m of equipment) {
    if (m.key === null) {
      machineError(run, null, 'the machine has no PIN, serial number or EquipmentID');
      continue;
    }
    if (run.seen.has(m.key)) {
      machineError(run, m.key, 'listed twice in the feed; the first listing is used');
      continue;
    }
    run.seen.add(m.key);
    for (const e of m.errors) machineError(run, m.key, e);
    kept.push(m as Keyed);
  }
  return kept;
}

export async function ingestPage(db: Database, run: PageRun, equipment: FeedEquipment[]) {
  const { ctx, counters } = run;
  const machines = admit(run, equipment);
  counters.pages++;
  counters.equipmentSeen += machines.length;
  const origin: ReadingOrigin = { source: 'telematics', id: run.connectionId };
  const fullPath: { assetId: string; reading: number; at: Date; key: string }[] = [];
  const faults: { assetId: string; key: string; fault: FeedFault }[] = [];

  // Readings carry the device's time: a month without its partition yet is created before the transaction.
  const stamps = machines.flatMap((m) => [m.operatingHours?.at, m.odometer?.at]).filter((d): d is Date => !!d);
  await ensureMonths(db, 'meter_logs', stamps);
  await sqlTransaction(db, async (tx) => {
    const known = new Map(
      (
        await knownMachines(
          tx,
          run.connectionId,
          machines.map((m) => m.key),
        )
      ).map((k) => [k.equipmentKey, k]),
    );
    const unlinked = machines.filter((m) => !known.get(m.key)?.linkMode);
    const candidates = unlinked.length ? await matchCandidates(tx, ctx.orgId, matchKeys(unlinked)) : [];
    const index = matchIndex(candidates);
    const taken = new Set(candidates.filter((c) => c.linked).map((c) => c.id));
    const links = new Map<string, string>();
    const rows = machines.map((machine) => {
      const k = known.get(machine.key);
      let autoAssetId: string | null = null;
      if (!k?.linkMode) {
        const assetId = matchAsset(machine, index);
        if (assetId && !taken.has(assetId)) {
          taken.add(assetId);
          autoAssetId = assetId;
        }
      }
      const assetId = k?.linkMode ? k.assetId : autoAssetId;
      if (assetId) links.set(machine.key, assetId);
      return { machine, autoAssetId };
    });
    await upsertMachines(tx, ctx.orgId, run.connectionId, rows, new Date());
    const meters = new Map((await lockMeters(tx, ctx.orgId, [...new Set(links.values())])).map((a) => [a.id, a]));
    for (const machine of machines) {
      const assetId = links.get(machine.key);
      const asset = assetId ? meters.get(assetId) : undefined;
      if (!assetId || !asset) {
        counters.unmatched++;
        continue;
      }
      counters.matched++;
      for (const fault of machine.faults) if (faultSeverity(fault)) faults.push({ assetId, key: machine.key, fault });
      const decision = decideReading(asset, machine);
      if (decision.kind === 'skip') counters.readingsSkipped++;
      if (decision.kind !== 'record') continue;
      try {
        const input = readingInput(assetId, decision.reading, decision.at);
        const recorded = await recordReadingSql(tx, ctx, input, null, origin);
        if (recorded) counters.readingsCreated++;
        else fullPath.push({ assetId, reading: decision.reading, at: decision.at, key: machine.key });
      } catch (err) {
        if (!(err instanceof ValidationError)) throw err;
        machineError(run, machine.key, `reading refused: ${Object.values(err.fieldErrors ?? {}).join('; ')}`);
      }
    }
    if (fullPath.length === 0 && faults.length === 0) await saveCounters(tx, run);
  });
  if (fullPath.length === 0 && faults.length === 0) return;

  await transaction(db, async (tx) => {
    for (const r of fullPath) {
      try {
        await recordReading(tx, ctx, readingInput(r.assetId, r.reading, r.at), null, origin);
        counters.readingsCreated++;
      } catch (err) {
        if (!(err instanceof ValidationError)) throw err;
        machineError(run, r.key, `reading refused: ${Object.values(err.fieldErrors ?? {}).join('; ')}`);
      }
    }
    for (const f of faults) if (await openFaultFlag(tx, ctx, f.assetId, f.fault)) counters.faultsOpened++;
    await saveCounters({ query: (text, params) => tx.$executeRawUnsafe(text, ...(params ?? [])) }, run);
  });
  // With read replicas: the organisation's reads from now on (the asset's readings) wait for this page.
  await db.replicas?.noteWrite(ctx.orgId);
}

/**
 * One open flag per asset and fault code: none while one is open, and none for a fault no later than the
 * resolution of the last flag for it (a feed that keeps listing an old fault does not reopen it).
 */
async function openFaultFlag(
  tx: Parameters<typeof insertFlag>[0],
  ctx: RequestContext,
  assetId: string,
  fault: FeedFault,
): Promise<boolean> {
  const severity = faultSeverity(fault);
  if (!severity) return false;
  const asset = await lockMeteredAsset(tx, ctx.orgId, assetId);
  if (!asset) return false;
  const dedupeKey = faultDedupeKey(fault.code);
  const last = await tx.flag.findFirst({
    where: { orgId: ctx.orgId, assetId, dedupeKey },
    orderBy: { createdAt: 'desc' },
    select: { status: true, resolvedAt: true },
  });
  if (last && (last.status === 'OPEN' || last.status === 'IN_PROGRESS')) return false;
  if (last?.resolvedAt && (!fault.at || fault.at.getTime() <= last.resolvedAt.getTime())) return false;
  await insertFlag(tx, ctx, { asset, severity, bySystem: true, dedupeKey, note: faultNote(fault) });
  return true;
}

async function saveCounters(tx: { query: (text: string, params?: unknown[]) => Promise<unknown> }, run: PageRun) {
  const c = run.counters;
  await tx.query(SAVE_COUNTERS_SQL, [
    run.runId,
    c.pages,
    c.equipmentSeen,
    c.matched,
    c.unmatched,
    c.readingsCreated,
    c.readingsSkipped,
    c.faultsOpened,
    c.machineErrors,
    JSON.stringify(c.errorSamples),
  ]);
}

/** The run's counters as they stand after a page (committed with it). */
export const SAVE_COUNTERS_SQL = `UPDATE telematics_runs SET pages = $2, "equipmentSeen" = $3, matched = $4, unmatched = $5,
  "readingsCreated" = $6, "readingsSkipped" = $7, "faultsOpened" = $8, "machineErrors" = $9, "errorSamples" = $10::jsonb
  WHERE id = $1`;
