import type { Database } from '../../../src/db/database.ts';
import { transaction } from '../../../src/db/transaction.ts';
import { EVENT_EXAMPLES } from '../../../src/delivery/event-examples.ts';
import { emit } from '../../../src/events/outbox.ts';
import { createTenant } from '../app/tenants.ts';

export interface Attempt {
  n: number;
  at: number;
  /** When it was due: creation for the first attempt, the previous attempt's nextAttemptAt after that. */
  due: number;
  error: string | null;
}

export type Watch = ReturnType<typeof watchAttempts>;

export interface DeliveryLog {
  status: string;
  attempts: Attempt[];
  /** Two attempts between polls (an attempt we could not time): never expected on a 1 s schedule. */
  missed: number;
}

interface Row {
  id: string;
  sid: string;
  status: string;
  attempts: number;
  createdAt: Date;
  lastAttemptAt: Date | null;
  nextAttemptAt: Date | null;
  error: string | null;
}

/**
 * Watches deliveries from outside, as an operator would (polling the rows every `everyMs`), and records each
 * attempt with the moment it was due, so tests can check the schedule's times and counts. `subscriptions` maps
 * each subscription watched to when its deliveries were committed.
 */
export function watchAttempts(db: Database, subscriptions: Map<string, number>, everyMs = 250) {
  const logs = new Map<string, DeliveryLog & { lastNext: number; lastCount: number }>();
  let stopped = false;
  async function poll() {
    const ids = JSON.stringify([...subscriptions.keys()]);
    const rows = await db.prisma.$queryRaw<Row[]>`
      SELECT id, "subscriptionId" AS sid, status::text AS status, attempts, "createdAt", "lastAttemptAt", "nextAttemptAt", error
      FROM webhook_deliveries WHERE "subscriptionId" IN (SELECT json_array_elements_text(${ids}::json))`;
    for (const r of rows) {
      let log = logs.get(r.id);
      if (!log) {
        // A row is stamped when its transaction began but due only once it commits.
        const due = Math.max(r.createdAt.getTime(), subscriptions.get(r.sid) ?? 0);
        log = { status: r.status, attempts: [], missed: 0, lastNext: due, lastCount: 0 };
        logs.set(r.id, log);
      }
      if (r.attempts > log.lastCount) {
        if (r.attempts > log.lastCount + 1) log.missed += r.attempts - log.lastCount - 1;
        log.attempts.push({ n: r.attempts, at: r.lastAttemptAt!.getTime(), due: log.lastNext, error: r.error });
      }
      log.lastCount = r.attempts;
      log.status = r.status;
      if (r.nextAttemptAt) log.lastNext = r.nextAttemptAt.getTime();
    }
  }
  const loop = (async () => {
    while (!stopped) {
      await poll();
      await new Promise((r) => setTimeout(r, everyMs));
    }
    await poll();
  })();
  return {
    logs: logs as Map<string, DeliveryLog>,
    poll,
    async stop() {
      stopped = true;
      await loop;
    },
    /** Worst lateness of any attempt against its due time (ms). */
    worstLatenessMs: () => Math.max(0, ...[...logs.values()].flatMap((l) => l.attempts.map((a) => a.at - a.due))),
  };
}

/**
 * One tenant and subscription per [path, n], then all their deliveries in ONE commit (on PGlite a second
 * transaction would hold the single connection and delay the dispatcher's claims). Each subscription is
 * entered in `watched` with its commit time; returns the subscription ids.
 */
export async function queueAll(
  db: Database,
  origin: string,
  specs: [path: string, n: number][],
  watched = new Map<string, number>(),
): Promise<string[]> {
  const subs: { id: string; orgId: string; path: string; n: number }[] = [];
  for (const [path, n] of specs) {
    const tenant = await createTenant(db, path);
    const { id } = await db.prisma.webhookSubscription.create({
      data: { orgId: tenant.orgId, url: `${origin}${path}`, events: ['tool.created'], secret: 'whsec_schedule' },
    });
    watched.set(id, 0);
    subs.push({ id, orgId: tenant.orgId, path, n });
  }
  await transaction(db, async (tx) => {
    for (const { orgId, path, n } of subs)
      for (let i = 0; i < n; i++)
        await emit(tx, orgId, 'tool.created', { ...EVENT_EXAMPLES['tool.created'], toolId: `${path}-${i}` });
  });
  const committed = Date.now();
  for (const { id } of subs) watched.set(id, committed);
  return subs.map((s) => s.id);
}
