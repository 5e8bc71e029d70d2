import { ApiError } from './errors.ts';
export const SCOPES = [
  'assets:read',
  'assets:write',
  'hours:read',
  'hours:write',
  'flags:read',
  'flags:write',
  'workorders:read',
  'workorders:write',
  'tools:read',
  'tools:write',
  'projects:read',
  'projects:write',
  'yards:read',
  'yards:write',
  'events:read',
  'events:write',
  // Organisation self-service (people and keys); added after the first sixteen, so keys issued before
  // keep exactly the scopes they were given.
  'users:read',
  'users:write',
  'keys:read',
  'keys:write',
  'telematics:read',
  'telematics:write',
  'inspections:read',
  'inspections:write',
  'fuel:read',
  'fuel:write',
  'expenses:read',
  'expenses:write',
  'reports:read',
  // Purchasing: vendors and purchase orders; approve separates who may commit the money from who drafts orders.
  'purchasing:read',
  'purchasing:write',
  'purchasing:approve',
  'parts:read',
  'parts:write',
  'organization:write',
] as const;
export type Scope = (typeof SCOPES)[number];

/** Who is calling: derived from the API key, handed to every service call. */
export interface RequestContext {
  orgId: string;
  keyId: string;
  /** The user who issued the key: the actor recorded on writes. */
  actorId: string | null;
  requestId: string;
  /**
   * The key's scopes, for services whose scope depends on the data (an attachment follows its subject's scope);
   * undefined for work the system does on its own (jobs, the CLI), which every scope admits.
   */
  scopes?: readonly Scope[];
}

export interface AuthenticatedKey {
  keyId: string;
  orgId: string;
  label: string;
  scopes: Scope[];
  rateLimitPerMinute: number | null;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
  creator: { id: string; name: string | null; email: string; removed: boolean } | null;
  org: { id: string; name: string; slug: string; createdAt: Date };
}

export interface RateLimitState {
  limit: number;
  remaining: number;
  resetEpochSec: number;
  windowSec: number;
  /** True when this request went over the cap. */
  limited: boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Scope a key needs for this route; `null` means any valid key. Omit only with `public: true`. */
    scope?: Scope | null;
    /** Public routes skip authentication and rate limiting. */
    public?: boolean;
    /**
     * POST/PATCH only. Omitted: the generic Idempotency-Key (src/http/idempotency.ts), the handler inside an
     * ambient transaction. `own`: the route implements the header itself (POST /hours, seed semantics).
     * `outside-transaction`: the effect is not a database change (a webhook test send), so the handler runs
     * outside a transaction and only its answer is recorded.
     */
    idempotency?: 'own' | 'outside-transaction';
  }
  interface FastifyRequest {
    key: AuthenticatedKey | null;
    rateLimit: RateLimitState | null;
  }
}

export function contextOf(request: { key: AuthenticatedKey | null; id: string }): RequestContext {
  const key = request.key;
  if (!key) throw new Error('route reached without an authenticated key');
  return {
    orgId: key.orgId,
    keyId: key.keyId,
    actorId: key.creator?.id ?? null,
    requestId: request.id,
    scopes: key.scopes,
  };
}

/** 403 missing_scope:<scope>, as the request chain answers, for a scope known only once the data is read. */
export function assertScope(ctx: RequestContext, scope: Scope): void {
  if (ctx.scopes && !ctx.scopes.includes(scope))
    throw new ApiError(403, `missing_scope:${scope}`, `This API key lacks the ${scope} scope`);
}
