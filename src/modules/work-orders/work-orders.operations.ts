// Creating a work order (number, row and workorder.created in one statement): shared by the work-orders service
// and the tools service (a reported or damaged tool opens one). Queries alone live in work-orders.repository.ts.
import { randomUUID } from 'node:crypto';
import type { WorkOrder, WorkOrderPriority, WorkOrderStatus } from '../../generated/prisma/client.ts';
import type { SqlRunner } from '../../db/database.ts';
import { afterCommit, type Tx } from '../../db/transaction.ts';
import { OUTBOX_NOTIFIED, outboxCtes, outboxEvent, signalQueued } from '../../events/outbox.ts';
import type { RequestContext } from '../../core/context.ts';
import type { KeyedQueue } from '../../core/keyed-queue.ts';

export interface NewWorkOrder {
  /** Default "Work order #<number>". */
  title?: string;
  description?: string | null;
  status?: WorkOrderStatus;
  priority?: WorkOrderPriority;
  assetId?: string | null;
  projectId?: string | null;
  flagId?: string | null;
  toolId?: string | null;
  dueAt?: Date | null;
  estimateLaborHours?: number | null;
  estimateCost?: number | null;
  assignedToId?: string | null;
}

/**
 * Creates a work order inside the caller's transaction and records workorder.created. Used by the work
 * orders API and by tool check-ins and reports. References must already be checked by the caller, and
 * callers call this last: the organisation's number lock is then held from this statement to the commit.
 *
 * One statement numbers the order, inserts it and writes its outbox rows (event, deliveries, NOTIFY). The
 * organisation row's lock (the UPDATE) is what makes numbers unique and gap-free (a rolled-back transaction
 * rolls back its increment too); taking it in the only statement that needs it, instead of a conversation
 * of round trips, keeps concurrent creates from queueing behind an idle transaction.
 */
export async function insertWorkOrder(tx: Tx, ctx: RequestContext, input: NewWorkOrder): Promise<WorkOrder> {
  const rows = await tx.$queryRawUnsafe<CreatedRow[]>(CREATE_SQL, ...createParams(ctx, input));
  return createdOrThrow(ctx, rows, () => afterCommit(tx, signalQueued));
}

/**
 * insertWorkOrder() as a transaction of its own: the one statement commits by itself, so the number lock
 * is held only while it runs, not across a BEGIN/COMMIT conversation with this process (whose event loop
 * may be busy with other requests while concurrent creates queue on the lock). A statement that commits by
 * itself cannot be rolled back by resetting its connection: at the request deadline the guarded client cancels
 * it (guarded-client.ts), and the server's statement timeout bounds it in any case.
 *
 * `numbering` lets at most two statements per organisation at a time leave this process: one holding the number
 * lock and the next already waiting for it at the database, so the lock passes at commit without a round trip
 * through this process; the others wait their turn here, in arrival order. Waiters on a PostgreSQL row lock are
 * not served in order (each wakes and retries), which gave a burst of creates a long tail, and each waiter held a
 * pool connection while blocked: ten creates in one organisation could take every connection from the other
 * tenants. With one waiter there is no order to get wrong. The row lock still orders creates across instances
 * and transactions.
 */
export async function insertWorkOrderAlone(
  sql: SqlRunner,
  numbering: KeyedQueue,
  ctx: RequestContext,
  input: NewWorkOrder,
): Promise<WorkOrder> {
  const params = createParams(ctx, input);
  const rows = await numbering.run(ctx.orgId, () => sql.query<CreatedRow>(CREATE_SQL, params, 'work-order-create'));
  return createdOrThrow(ctx, rows, signalQueued);
}

type CreatedRow = WorkOrder & { outboxNotified?: string | null };

function createdOrThrow(ctx: RequestContext, rows: CreatedRow[], signal: () => void): WorkOrder {
  if (rows.length !== 1) throw new Error(`organisation ${ctx.orgId} not found while numbering a work order`);
  const { outboxNotified, ...wo } = rows[0];
  if (outboxNotified != null) signal();
  return wo as WorkOrder;
}

function createParams(ctx: RequestContext, input: NewWorkOrder): unknown[] {
  const status = input.status ?? 'OPEN';
  const priority = input.priority ?? 'NORMAL';
  const id = randomUUID();
  const createdAt = new Date();
  // The number, and the default title made from it, exist only inside the statement: the validated payload
  // carries placeholders that the statement overwrites from the inserted row.
  const { eventId, payload } = outboxEvent('workorder.created', {
    workOrderId: id,
    number: 0,
    title: input.title ?? '',
    status,
    priority,
    assetId: input.assetId ?? null,
    projectId: input.projectId ?? null,
    flagId: input.flagId ?? null,
    toolId: input.toolId ?? null,
    assignedToId: input.assignedToId ?? null,
    dueAt: input.dueAt?.toISOString() ?? null,
    createdById: ctx.actorId,
    createdAt: createdAt.toISOString(),
  });
  return [
    ctx.orgId,
    id,
    input.title ?? null,
    input.description ?? null,
    status,
    priority,
    input.assetId ?? null,
    input.projectId ?? null,
    input.flagId ?? null,
    input.toolId ?? null,
    input.dueAt ?? null,
    input.estimateLaborHours ?? null,
    input.estimateCost ?? null,
    input.assignedToId ?? null,
    ctx.actorId ?? 'system',
    status === 'DONE' ? createdAt : null,
    createdAt,
    eventId,
    'workorder.created',
    JSON.stringify(payload),
  ];
}

const CREATE_SQL = `
  WITH seq AS (
    UPDATE organizations SET "workOrderSeq" = "workOrderSeq" + 1 WHERE id = $1 RETURNING "workOrderSeq" AS n
  ),
  wo AS (
    INSERT INTO work_orders (id, "orgId", number, title, description, status, priority, "assetId", "projectId", "flagId",
      "toolId", "dueAt", "estimateLaborHours", "estimateCost", "assignedToId", "createdById", "completedAt", "createdAt", "updatedAt")
    SELECT $2::text, $1::text, seq.n, COALESCE($3::text, 'Work order #' || seq.n), $4::text, $5::"WorkOrderStatus",
      $6::"WorkOrderPriority", $7::text, $8::text, $9::text, $10::text, $11::timestamptz, $12::float8, $13::float8, $14::text,
      $15::text, $16::timestamptz, $17::timestamptz, $17::timestamptz
    FROM seq
    RETURNING *
  ),
  ${outboxCtes({
    eventId: '$18',
    orgId: '$1',
    type: '$19',
    from: 'wo',
    data: `jsonb_set(jsonb_set($20::jsonb, '{number}', to_jsonb(wo.number)), '{title}', to_jsonb(wo.title::text))`,
  })}
  SELECT wo.*, ${OUTBOX_NOTIFIED} FROM wo`;
