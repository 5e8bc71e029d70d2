import type { FastifyBaseLogger } from 'fastify';
import type { Breakers } from './breaker.ts';
import type { Claims } from './claims.ts';

/** Rows per subscription failed unsent in one statement (more are taken by the next statement at once). */
const SKIP_BATCH = 500;

/**
 * Records the due attempts of subscriptions whose breaker is open as failed, not sent (see breaker.ts), in
 * batched statements (claims.skipUnsent). Costs no sender slot, so the subscription's share and everyone
 * else's fairness are untouched.
 */
export function createUnsentRecorder({
  claims,
  breakers,
  log,
  retryScheduleSec,
  onOutcome,
  onRetryScheduled,
}: {
  claims: Claims;
  breakers: Breakers;
  log: FastifyBaseLogger;
  retryScheduleSec: number[];
  onOutcome?: (outcome: 'ABANDONED' | 'SKIPPED_CIRCUIT_OPEN') => void;
  /** The earliest next attempt just scheduled (seconds), to wake the dispatcher then. */
  onRetryScheduled: (sec: number) => void;
}) {
  return {
    async record(): Promise<{ failed: number; abandoned: number }> {
      const total = { failed: 0, abandoned: 0 };
      let { skip } = breakers.restrictions();
      while (skip.size > 0) {
        const rows = await claims.skipUnsent(skip, SKIP_BATCH, retryScheduleSec);
        const perSub = new Map<string, number>();
        let minRetry: number | null = null;
        for (const r of rows) {
          perSub.set(r.sid, (perSub.get(r.sid) ?? 0) + 1);
          if (r.status === 'ABANDONED') total.abandoned++;
          else total.failed++;
          onOutcome?.(r.status === 'ABANDONED' ? 'ABANDONED' : 'SKIPPED_CIRCUIT_OPEN');
          if (r.retry !== null) minRetry = Math.min(minRetry ?? r.retry, r.retry);
        }
        if (minRetry !== null) onRetryScheduled(minRetry);
        if (rows.length > 0) log.info({ attempts: rows.length }, 'webhook attempts recorded unsent: circuit open');
        // Only a subscription that filled its batch may have more due rows.
        skip = new Map([...skip].filter(([id]) => (perSub.get(id) ?? 0) >= SKIP_BATCH));
      }
      return total;
    },
  };
}
