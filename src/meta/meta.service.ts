import type { AuthenticatedKey, RateLimitState } from '../core/context.ts';
import { immutable } from '../core/immutable.ts';
import type { ServiceDeps } from '../service-deps.ts';

const PING_TIMEOUT_MS = 2_000;

type MeParts = {
  organization: { id: string; name: string; slug: string; createdAt: string };
  apiKey: {
    id: string;
    label: string;
    scopes: AuthenticatedKey['scopes'];
    createdAt: string;
    expiresAt: string | null;
    createdBy: { id: string; name: string | null; email: string } | null;
  };
};

/**
 * What GET /me answers apart from lastUsedAt, made once per cached key (the authenticator hands out the same key
 * object for its TTL) rather than formatting the same dates on every call. Immutable: the serialiser writes the
 * organisation, the scopes and the creator once per key.
 */
const fixedParts = new WeakMap<AuthenticatedKey, MeParts>();
function fixedPartsOf(key: AuthenticatedKey): MeParts {
  let parts = fixedParts.get(key);
  if (!parts) {
    parts = immutable({
      organization: {
        id: key.org.id,
        name: key.org.name,
        slug: key.org.slug,
        createdAt: key.org.createdAt.toISOString(),
      },
      apiKey: {
        id: key.keyId,
        label: key.label,
        scopes: [...key.scopes],
        createdAt: key.createdAt.toISOString(),
        expiresAt: key.expiresAt?.toISOString() ?? null,
        createdBy: key.creator ? { id: key.creator.id, name: key.creator.name, email: key.creator.email } : null,
      },
    });
    fixedParts.set(key, parts);
  }
  return parts;
}

type MeAnswer = {
  ok: true;
  organization: MeParts['organization'];
  apiKey: MeParts['apiKey'] & { lastUsedAt: string | null };
};

/**
 * The whole answer of the key's latest millisecond of use: requests of one key within one millisecond get the same
 * immutable object, which the serialiser checks and writes once.
 */
const lastAnswers = new WeakMap<AuthenticatedKey, { ms: number | null; answer: MeAnswer }>();
function answerOf(key: AuthenticatedKey, lastUsed: Date | null): MeAnswer {
  const ms = lastUsed?.getTime() ?? null;
  const last = lastAnswers.get(key);
  if (last && last.ms === ms) return last.answer;
  const { organization, apiKey } = fixedPartsOf(key);
  // Field by field, not `{ ...apiKey, lastUsedAt }`: spreading the cached object and adding a field made an object
  // V8 builds and reads slowly.
  const answer = immutable({
    ok: true as const,
    organization,
    apiKey: {
      id: apiKey.id,
      label: apiKey.label,
      scopes: apiKey.scopes,
      createdAt: apiKey.createdAt,
      lastUsedAt: ms === null ? null : new Date(ms).toISOString(),
      expiresAt: apiKey.expiresAt,
      createdBy: apiKey.createdBy,
    },
  });
  lastAnswers.set(key, { ms, answer });
  return answer;
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

    me(key: AuthenticatedKey) {
      return answerOf(key, auth.lastUsedAt(key));
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
