import type { AuthenticatedKey, RateLimitState } from '../../core/context.ts';
import type { ServiceDeps } from '../../service-deps.ts';

const PING_TIMEOUT_MS = 2_000;

export function createMetaService({ db, auth }: Pick<ServiceDeps, 'db' | 'auth'>) {
  return {
    /** Pings the database; a hung connection counts as unhealthy after PING_TIMEOUT_MS. */
    async pingDatabase(timeoutMs = PING_TIMEOUT_MS): Promise<'ok' | 'error' | 'timeout'> {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), timeoutMs);
      });
      const ping = db.sql.query('SELECT 1').then(
        () => 'ok' as const,
        () => 'error' as const,
      );
      try {
        return await Promise.race([ping, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },

    me(key: AuthenticatedKey) {
      return {
        ok: true as const,
        organization: { ...key.org, createdAt: key.org.createdAt.toISOString() },
        apiKey: {
          id: key.keyId,
          label: key.label,
          scopes: key.scopes,
          createdAt: key.createdAt.toISOString(),
          lastUsedAt: auth.lastUsedAt(key)?.toISOString() ?? null,
          expiresAt: key.expiresAt?.toISOString() ?? null,
          createdBy: key.creator ? { id: key.creator.id, name: key.creator.name, email: key.creator.email } : null,
        },
      };
    },

    /** The numbers of this very request's rate-limit headers: the usage call counts like any other. */
    usage(key: AuthenticatedKey, state: RateLimitState, nowMs = Date.now()) {
      return {
        ok: true as const,
        keyId: key.keyId,
        rateLimit: {
          limit: state.limit,
          remaining: state.remaining,
          resetEpochSec: state.resetEpochSec,
          resetIn: Math.max(0, state.resetEpochSec - Math.floor(nowMs / 1000)),
          windowSec: state.windowSec,
        },
      };
    },
  };
}
