import type { ToolEvent } from '../../generated/prisma/client.ts';
import type { RequestContext } from '../../core/context.ts';
import { ValidationError } from '../../core/errors.ts';
import { enumIn, keysetSql, NEWEST_FIRST } from '../../core/pagination.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import { findOwnedTool } from './tools.repository.ts';
import type { ToolEventsInput } from './tools.schemas.ts';

const DAY_MS = 86_400_000;

interface UtilizationRow {
  checkedOutMs: number;
  checkoutCount: number;
  openAtWindowEnd: boolean;
  top: { userId: string; checkedOutMs: number; checkoutCount: number }[];
}

/**
 * Custody intervals from CHECK_OUT/CHECK_IN events in time order, computed in SQL so a busy tool's year of
 * events never travels to the process. A CHECK_OUT while the tool is out (a forced hand-over) closes the
 * previous holder's interval; a CHECK_IN with nothing open is ignored; the last event before the window is
 * carried in, so a checkout open at the window start is counted. Each CHECK_OUT is closed by the next event
 * (lead) or the window end and clipped to the window (tool_events(toolId, createdAt, id)); totals and the
 * top users come back.
 */
const UTILIZATION_SQL = `
  WITH ev AS (
    (SELECT kind, "holderUserId", "createdAt", id FROM tool_events
     WHERE "toolId" = $1 AND "orgId" = $2 AND kind IN ('CHECK_OUT', 'CHECK_IN') AND "createdAt" < $3::timestamptz
     ORDER BY "createdAt" DESC, id DESC LIMIT 1)
    UNION ALL
    (SELECT kind, "holderUserId", "createdAt", id FROM tool_events
     WHERE "toolId" = $1 AND "orgId" = $2 AND kind IN ('CHECK_OUT', 'CHECK_IN') AND "createdAt" >= $3::timestamptz AND "createdAt" <= $4::timestamptz)
  ), seq AS (
    SELECT kind, "holderUserId" AS uid, "createdAt" AS t, lead("createdAt") OVER (ORDER BY "createdAt", id) AS next_t,
      row_number() OVER (ORDER BY "createdAt" DESC, id DESC) AS from_end
    FROM ev
  ), clipped AS (
    SELECT uid, greatest(t, $3::timestamptz) AS s, least(coalesce(next_t, $4::timestamptz), $4::timestamptz) AS e FROM seq WHERE kind = 'CHECK_OUT'
  ), kept AS (
    SELECT uid, (extract(epoch FROM e - s) * 1000)::float8 AS ms FROM clipped
    WHERE e > s OR (e = s AND s > $3::timestamptz AND s < $4::timestamptz)
  )
  SELECT (SELECT coalesce(sum(ms), 0)::float8 FROM kept) AS "checkedOutMs", (SELECT count(*)::int FROM kept) AS "checkoutCount",
    coalesce((SELECT kind = 'CHECK_OUT' FROM seq WHERE from_end = 1), false) AS "openAtWindowEnd",
    coalesce((SELECT json_agg(u) FROM (
      SELECT uid AS "userId", sum(ms)::float8 AS "checkedOutMs", count(*)::int AS "checkoutCount" FROM kept WHERE uid IS NOT NULL
      GROUP BY uid ORDER BY 2 DESC, 3 DESC, uid LIMIT $5) u), '[]'::json) AS top`;

export function createToolActivity({ db }: Pick<ServiceDeps, 'db'>) {
  return {
    async events(ctx: RequestContext, id: string, q: ToolEventsInput) {
      const rows = await listToolEvents(db, ctx, id, q);
      const page = rows.slice(0, q.limit);
      return {
        ok: true as const,
        toolId: id,
        events: page.map((e) => ({
          id: e.id,
          kind: e.kind,
          condition: e.condition,
          description: e.description,
          cost: e.cost,
          linkedAssetId: e.linkedAssetId,
          linkedWorkOrderId: e.linkedWorkOrderId,
          photoId: e.photoId,
          holderUserId: e.holderUserId,
          holderVehicleId: e.holderVehicleId,
          actor: e.actor,
          createdAt: e.createdAt.toISOString(),
        })),
        nextCursor: rows.length > q.limit ? page[page.length - 1].id : null,
      };
    },

    async utilization(ctx: RequestContext, id: string, q: { days: number; topN: number }) {
      await findOwnedTool(db.prisma, ctx, id);
      const windowEnd = Date.now();
      const windowStart = windowEnd - q.days * DAY_MS;
      const [stats] = await db.sql.query<UtilizationRow>(UTILIZATION_SQL, [
        id,
        ctx.orgId,
        new Date(windowStart).toISOString(),
        new Date(windowEnd).toISOString(),
        q.topN,
      ]);
      const { checkedOutMs, checkoutCount, openAtWindowEnd } = stats;
      const top = stats.top.map(
        (u) => [u.userId, { checkedOutMs: u.checkedOutMs, checkoutCount: u.checkoutCount }] as const,
      );
      const users = await db.prisma.user.findMany({
        where: { id: { in: top.map(([u]) => u) }, orgId: ctx.orgId },
        select: { id: true, name: true, email: true },
      });
      const userById = new Map(users.map((u) => [u.id, u]));
      const windowMs = windowEnd - windowStart;
      return {
        ok: true as const,
        utilization: {
          toolId: id,
          windowStart: new Date(windowStart).toISOString(),
          windowEnd: new Date(windowEnd).toISOString(),
          windowMs,
          checkedOutMs,
          checkoutCount,
          openAtWindowEnd,
          utilizationPct: Math.round((checkedOutMs / windowMs) * 10_000) / 10_000,
          topUsers: top.map(([userId, u]) => ({
            userId,
            name: userById.get(userId)?.name ?? null,
            email: userById.get(userId)?.email ?? null,
            ...u,
          })),
        },
      };
    },
  };
}

/** An event with its actor (id, name, email), or null when there is none or it is not of the organisation. */
export type ToolEventWithActor = ToolEvent & { actor: { id: string; name: string | null; email: string } | null };

/**
 * A tool's events newest first on tool_events(toolId, createdAt, id); the cursor (an event id) becomes a
 * row-value range on that index, so any page costs the same. The other filters apply within the range.
 * One statement answers a page: the cursor row is looked up inside it (an InitPlan) and each event's actor
 * by primary key beside it. A page with events proves the tool is the organisation's (events carry its
 * orgId); only an empty page asks again, for a 404 (no such tool) or a 422 (no such cursor event).
 */
export async function listToolEvents(
  db: Pick<ServiceDeps['db'], 'prisma' | 'sql'>,
  ctx: RequestContext,
  toolId: string,
  q: ToolEventsInput,
): Promise<ToolEventWithActor[]> {
  const where = ['"toolId" = $1', '"orgId" = $2'];
  const params: unknown[] = [toolId, ctx.orgId];
  if (q.kind.length > 0) where.push(enumIn(params, 'kind', 'ToolEventKind', q.kind));
  if (q.since) where.push(`"createdAt" >= $${params.push(q.since.toISOString())}::timestamptz`);
  if (q.actorId !== undefined) where.push(`"actorId" = $${params.push(q.actorId)}`);
  if (q.linkedAssetId !== undefined) where.push(`"linkedAssetId" = $${params.push(q.linkedAssetId)}`);
  const afterRow = q.cursor
    ? `SELECT "createdAt", id FROM tool_events WHERE id = $${params.push(q.cursor)} AND "toolId" = $1 AND "orgId" = $2`
    : undefined;
  const { text, params: all } = keysetSql({
    from: 'tool_events',
    where,
    params,
    order: NEWEST_FIRST,
    direction: 'desc',
    after: null,
    afterRow,
    take: q.limit + 1,
  });
  const rows = await db.sql.query<ToolEventWithActor>(
    `SELECT page.*, (SELECT json_build_object('id', u.id, 'name', u.name, 'email', u.email) FROM users u
       WHERE u.id = page."actorId" AND u."orgId" = $2) AS actor
     FROM (${text}) AS page ORDER BY page."createdAt" DESC, page.id DESC`,
    all,
  );
  if (rows.length === 0) {
    await findOwnedTool(db.prisma, ctx, toolId);
    if (q.cursor) {
      const found = await db.prisma.toolEvent.findFirst({
        where: { id: q.cursor, toolId, orgId: ctx.orgId },
        select: { id: true },
      });
      if (!found) throw new ValidationError({ cursor: 'is not a cursor returned by this endpoint' });
    }
  }
  return rows;
}
