import type { ToolEvent } from '../../generated/prisma/client.ts';
import type { RequestContext } from '../../core/context.ts';
import { notFound, ValidationError } from '../../core/errors.ts';
import { enumIn, keysetSql, NEWEST_FIRST } from '../../core/pagination.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import { findOwnedTool } from './tools.repository.ts';
import type { ToolEventsInput } from './tools.schemas.ts';

const DAY_MS = 86_400_000;

interface UtilizationRow {
  checkedOutMs: number;
  checkoutCount: number;
  openAtWindowEnd: boolean;
  top: { userId: string; name: string | null; email: string | null; checkedOutMs: number; checkoutCount: number }[];
}

/**
 * Custody intervals from CHECK_OUT/CHECK_IN events in time order, computed in SQL so a busy tool's year of
 * events never travels to the process. A CHECK_OUT while the tool is out (a forced hand-over) closes the
 * previous holder's interval; a CHECK_IN with nothing open is ignored. Each CHECK_OUT is closed by the next
 * custody event (lead) or the window end and clipped to the window. The scan starts at the last custody event
 * before the window (so a checkout open at the window start is counted; intervals that end before the window
 * clip to nothing) and reads tool_events_custody_idx only, in order: an index-only scan, no sort. Returns no
 * row when the tool is not the organisation's. The top users come with their names (one round trip).
 */
const UTILIZATION_SQL = `
  WITH tool AS (SELECT id FROM tools WHERE id = $1 AND "orgId" = $2),
  seq AS (
    SELECT kind, "holderUserId" AS uid, "createdAt" AS t, lead("createdAt") OVER (ORDER BY "createdAt", id) AS next_t
    FROM tool_events
    WHERE "toolId" = $1 AND "orgId" = $2 AND kind IN ('CHECK_OUT', 'CHECK_IN') AND "createdAt" <= $4::timestamptz
      AND "createdAt" >= coalesce((SELECT max("createdAt") FROM tool_events WHERE "toolId" = $1 AND "orgId" = $2
        AND kind IN ('CHECK_OUT', 'CHECK_IN') AND "createdAt" < $3::timestamptz), $3::timestamptz)
  ), kept AS MATERIALIZED (
    -- date_part is float8 (extract() would be numeric, several times slower per interval); every time here has
    -- whole milliseconds, so rounding only removes the float's representation error.
    SELECT uid, round(date_part('epoch', e - s) * 1000) AS ms FROM (
      SELECT uid, greatest(t, $3::timestamptz) AS s, least(coalesce(next_t, $4::timestamptz), $4::timestamptz) AS e
      FROM seq WHERE kind = 'CHECK_OUT'
    ) c
    WHERE e > s OR (e = s AND s > $3::timestamptz AND s < $4::timestamptz)
  )
  SELECT (SELECT coalesce(sum(ms), 0)::float8 FROM kept) AS "checkedOutMs", (SELECT count(*)::int FROM kept) AS "checkoutCount",
    coalesce((SELECT kind = 'CHECK_OUT' FROM tool_events WHERE "toolId" = $1 AND "orgId" = $2
      AND kind IN ('CHECK_OUT', 'CHECK_IN') AND "createdAt" <= $4::timestamptz ORDER BY "createdAt" DESC, id DESC LIMIT 1),
      false) AS "openAtWindowEnd",
    coalesce((SELECT json_agg(json_build_object('userId', k.uid, 'name', us.name, 'email', us.email,
        'checkedOutMs', k.ms, 'checkoutCount', k.n) ORDER BY k.ms DESC, k.n DESC, k.uid)
      FROM (SELECT uid, sum(ms)::float8 AS ms, count(*)::int AS n FROM kept WHERE uid IS NOT NULL
            GROUP BY uid ORDER BY 2 DESC, 3 DESC, uid LIMIT $5) k
      LEFT JOIN users us ON us.id = k.uid AND us."orgId" = $2), '[]'::json) AS top
  FROM tool`;

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
      const windowEnd = Date.now();
      const windowStart = windowEnd - q.days * DAY_MS;
      const [stats] = await db.sql.query<UtilizationRow>(
        UTILIZATION_SQL,
        [id, ctx.orgId, new Date(windowStart).toISOString(), new Date(windowEnd).toISOString(), q.topN],
        'tool-utilization',
      );
      if (!stats) throw notFound('Tool');
      const { checkedOutMs, checkoutCount, openAtWindowEnd } = stats;
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
          topUsers: stats.top,
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
