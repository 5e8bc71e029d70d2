import type { WorkOrderStatus } from '../../generated/prisma/client.ts';
import { conflict } from '../../core/errors.ts';
import { ACTIVE_STATUSES } from './work-orders.schemas.ts';

/**
 * Allowed status moves. The four active states move freely among themselves and to DONE or CANCELED.
 * DONE is terminal: the order carries its repairs and its completion event, so follow-up work gets a
 * new order. CANCELED can be re-opened into any active state, but not closed directly as DONE.
 * Setting the current status again is always a no-op.
 */
export function allowedNextStatuses(from: WorkOrderStatus): WorkOrderStatus[] {
  if (from === 'DONE') return [];
  if (from === 'CANCELED') return [...ACTIVE_STATUSES];
  return [...ACTIVE_STATUSES, 'CANCELED', 'DONE'].filter((s) => s !== from) as WorkOrderStatus[];
}

export function assertStatusMove(from: WorkOrderStatus, to: WorkOrderStatus): void {
  if (from === to) return;
  const allowed = allowedNextStatuses(from);
  if (!allowed.includes(to)) {
    throw conflict(
      'invalid_status_transition',
      allowed.length === 0
        ? `Work order is ${from}, a terminal status; it cannot move to ${to}`
        : `Work order is ${from}; it can move to ${allowed.join(', ')}, not ${to}`,
    );
  }
}
