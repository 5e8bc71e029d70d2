import type { AuthenticatedKey, RateLimitState } from '../core/context.ts';
import { MeResponse } from './meta.schemas.ts';
import type { ServiceDeps } from '../service-deps.ts';

const PING_TIMEOUT_MS = 2_000;

/** A lastUsedAt that marks where each answer's own value goes in a key's template. */
const PLACEHOLDER = new Date(0).toISOString();
const MARK = `"lastUsedAt":"${PLACEHOLDER}"`;

/**
 * GET /me's answer for a key as JSON text around its lastUsedAt: checked against MeResponse and written once per
 * cached key (the authenticator hands out the same key object for its TTL), so a request only splices in the
 * time. The bytes are the route serialiser's: JSON.stringify of zod's output (src/http/response-serializer.ts).
 */
const templates = new WeakMap<AuthenticatedKey, [before: string, after: string]>();
function templateOf(key: AuthenticatedKey): [string, string] {
  let template = templates.get(key);
  if (!template) {
    const json = JSON.stringify(
      MeResponse.parse({
        ok: true,
        organization: {
          id: key.org.id,
          name: key.org.name,
          slug: key.org.slug,
          createdAt: key.org.createdAt.toISOString(),
        },
        apiKey: {
          id: key.keyId,
          label: key.label,
          scopes: key.scopes,
          createdAt: key.createdAt.toISOString(),
          lastUsedAt: PLACEHOLDER,
          expiresAt: key.expiresAt?.toISOString() ?? null,
          createdBy: key.creator ? { id: key.creator.id, name: key.creator.name, email: key.creator.email } : null,
        },
      }),
    );
    // Found once: inside a string value the quotes around a name would be escaped.
    const at = json.indexOf(MARK) + '"lastUsedAt":'.length;
    template = [json.slice(0, at), json.slice(at + PLACEHOLDER.length + 2)];
    templates.set(key, template);
  }
  return template;
}

/** One ISO text per millisecond for every key's answer (concurrent requests mostly share the current one). */
let isoMs = Number.NaN;
let isoJson = '';
function isoJsonOf(ms: number): string {
  if (ms !== isoMs) {
    isoMs = ms;
    isoJson = `"${new Date(ms).toISOString()}"`;
  }
  return isoJson;
}

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

    /** GET /me's answer as JSON text (MeResponse's bytes), for the route to send as it is. */
    meJson(key: AuthenticatedKey): string {
      const [before, after] = templateOf(key);
      const lastUsed = auth.lastUsedMs(key);
      return before + (lastUsed === null ? 'null' : isoJsonOf(lastUsed)) + after;
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
