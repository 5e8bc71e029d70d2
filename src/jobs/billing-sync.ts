import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../db/database.ts';
import type { Background } from './background.ts';
import { lazyModule } from '../core/lazy-module.ts';

// undici is slow to load (docs/adr/0010-lazy-start-up.md); a process without BILLING_SYNC_URL never needs it.
const undici = lazyModule<typeof import('undici')>('undici');

/** Assets that count for billing: everything not archived or sold. */
export const BILLABLE_STATUSES = ['IN_SERVICE', 'OUT_OF_SERVICE'] as const;

/**
 * After assets are created, POSTs the organisation's billable asset count to BILLING_SYNC_URL in the
 * background. Sends the current count (not a delta), so a lost or repeated sync heals on the next one.
 * A slow or dead provider never delays or fails the request that triggered it.
 */
export function createBillingSync(
  db: Database,
  options: { url?: string; timeoutMs: number },
  background: Background,
  log: FastifyBaseLogger,
) {
  async function sync(orgId: string) {
    const billableAssets = await db.prisma.asset.count({
      where: { orgId, lifecycleStatus: { in: [...BILLABLE_STATUSES] } },
    });
    const res = await undici().request(options.url!, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ organizationId: orgId, billableAssets, sentAt: new Date().toISOString() }),
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
    await res.body.dump();
    if (res.statusCode >= 300) throw new Error(`billing provider answered ${res.statusCode}`);
    log.debug({ orgId, billableAssets }, 'billing quantity synced');
  }

  return {
    enabled: Boolean(options.url),
    schedule(orgId: string): void {
      if (!options.url) return;
      background.run('billing-sync', { orgId }, () => sync(orgId));
    },
  };
}

export type BillingSync = ReturnType<typeof createBillingSync>;
