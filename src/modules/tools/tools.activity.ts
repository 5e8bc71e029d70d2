import type { Prisma, ToolEvent } from '../../generated/prisma/client.ts';
import type { RequestContext } from '../../http/context.ts';
import { ValidationError } from '../../http/errors.ts';
import { keysetSql, NEWEST_FIRST } from '../../http/pagination.ts';
import type { ServiceDeps } from '../services.ts';
import { findOwnedTool } from './tools.repository.ts';
import type { ToolEventsInput } from './tools.schemas.ts';

const DAY_MS = 86_400_000;

interface Interval {
  userId: string | null;
  start: number;
  end: number;
}

/**
 * Custody intervals from CHECK_OUT/CHECK_IN events in time order. A CHECK_OUT while the tool is out (a
 * forced hand-over) closes the previous holder's interval; a CHECK_IN with nothing open is ignored.
 * `carried` is the last event before the window, so a checkout open at the window start is counted.
 */
export function custodyIntervals(events: Pick<ToolEvent, 'kind' | 'holderUserId' | 'createdAt'>[], windowStart: number, windowEnd: number) {
  const intervals: Interval[] = [];
  let open: { userId: string | null; start: number } | null = null;
  for (const e of events) {
    const t = e.createdAt.getTime();
    if (open) intervals.push({ ...open, end: t });
    open = e.kind === 'CHECK_OUT' ? { userId: e.holderUserId, start: t } : null;
  }
  if (open) intervals.push({ ...open, end: windowEnd });
  const clipped = intervals
    .map((i) => ({ ...i, start: Math.max(i.start, windowStart), end: Math.min(i.end, windowEnd) }))
    .filter((i) => i.end > i.start || (i.end === i.start && i.start > windowStart && i.start < windowEnd));
  return { intervals: clipped, openAtWindowEnd: open !== null };
}

export function createToolActivity({ db }: Pick<ServiceDeps, 'db'>) {
  return {
    async events(ctx: RequestContext, id: string, q: ToolEventsInput) {
      await findOwnedTool(db.prisma, ctx, id);
      const rows = await listToolEvents(db, ctx.orgId, id, q);
      const page = rows.slice(0, q.limit);
      const actorIds = [...new Set(page.map((e) => e.actorId).filter((a): a is string => a !== null))];
      const actors = await db.prisma.user.findMany({ where: { id: { in: actorIds }, orgId: ctx.orgId }, select: { id: true, name: true, email: true } });
      const actorById = new Map(actors.map((a) => [a.id, a]));
      return {
        ok: true as const,
        toolId: id,
        events: page.map((e) => ({
          id: e.id, kind: e.kind, condition: e.condition, description: e.description, cost: e.cost,
          linkedAssetId: e.linkedAssetId, linkedWorkOrderId: e.linkedWorkOrderId, photoId: e.photoId,
          holderUserId: e.holderUserId, holderVehicleId: e.holderVehicleId,
          actor: e.actorId ? (actorById.get(e.actorId) ?? null) : null,
          createdAt: e.createdAt.toISOString(),
        })),
        nextCursor: rows.length > q.limit ? page[page.length - 1].id : null,
      };
    },

    async utilization(ctx: RequestContext, id: string, q: { days: number; topN: number }) {
      await findOwnedTool(db.prisma, ctx, id);
      const windowEnd = Date.now();
      const windowStart = windowEnd - q.days * DAY_MS;
      const custody = { toolId: id, orgId: ctx.orgId, kind: { in: ['CHECK_OUT' as const, 'CHECK_IN' as const] } };
      const select = { kind: true, holderUserId: true, createdAt: true } as const;
      const carried = await db.prisma.toolEvent.findFirst({
        where: { ...custody, createdAt: { lt: new Date(windowStart) } }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], select,
      });
      const inWindow = await db.prisma.toolEvent.findMany({
        where: { ...custody, createdAt: { gte: new Date(windowStart), lte: new Date(windowEnd) } },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }], select,
      });
      const { intervals, openAtWindowEnd } = custodyIntervals(carried ? [carried, ...inWindow] : inWindow, windowStart, windowEnd);
      const checkedOutMs = intervals.reduce((sum, i) => sum + (i.end - i.start), 0);
      const perUser = new Map<string, { checkedOutMs: number; checkoutCount: number }>();
      for (const i of intervals) {
        if (!i.userId) continue;
        const u = perUser.get(i.userId) ?? { checkedOutMs: 0, checkoutCount: 0 };
        u.checkedOutMs += i.end - i.start;
        u.checkoutCount += 1;
        perUser.set(i.userId, u);
      }
      const top = [...perUser.entries()]
        .sort(([aId, a], [bId, b]) => b.checkedOutMs - a.checkedOutMs || b.checkoutCount - a.checkoutCount || aId.localeCompare(bId))
        .slice(0, q.topN);
      const users = await db.prisma.user.findMany({ where: { id: { in: top.map(([u]) => u) }, orgId: ctx.orgId }, select: { id: true, name: true, email: true } });
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
          checkoutCount: intervals.length,
          openAtWindowEnd,
          utilizationPct: Math.round((checkedOutMs / windowMs) * 10_000) / 10_000,
          topUsers: top.map(([userId, u]) => ({
            userId, name: userById.get(userId)?.name ?? null, email: userById.get(userId)?.email ?? null, ...u,
          })),
        },
      };
    },
  };
}

/**
 * A tool's events newest first on tool_events(toolId, createdAt, id); the cursor (an event id) becomes a
 * row-value range on that index, so any page costs the same. The other filters apply within the range.
 */
async function listToolEvents(db: ServiceDeps['db'], orgId: string, toolId: string, q: ToolEventsInput): Promise<ToolEvent[]> {
  const where = ['"toolId" = $1', '"orgId" = $2'];
  const params: unknown[] = [toolId, orgId];
  if (q.kind.length > 0) where.push(`kind = ANY($${params.push(q.kind)}::"ToolEventKind"[])`);
  if (q.since) where.push(`"createdAt" >= $${params.push(q.since.toISOString())}::timestamptz`);
  if (q.actorId !== undefined) where.push(`"actorId" = $${params.push(q.actorId)}`);
  if (q.linkedAssetId !== undefined) where.push(`"linkedAssetId" = $${params.push(q.linkedAssetId)}`);
  let after: unknown[] | null = null;
  if (q.cursor) {
    const found = await db.prisma.toolEvent.findFirst({ where: { id: q.cursor, toolId, orgId }, select: { id: true, createdAt: true } });
    if (!found) throw new ValidationError({ cursor: 'is not a cursor returned by this endpoint' });
    after = [found.createdAt.toISOString(), found.id];
  }
  const { text, params: all } = keysetSql({ from: 'tool_events', where, params, order: NEWEST_FIRST, direction: 'desc', after, take: q.limit + 1 });
  return db.sql.query<ToolEvent>(text, all);
}
