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
  'imports:read',
  'imports:write',
] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * What each scope grants, one line each, for docs/reference/scopes.md (`npm run docs`); the operations that need
 * each scope are listed there from the routes' `config.scope`.
 */
export const SCOPE_GRANTS: Record<Scope, string> = {
  'assets:read': "Read assets, their checkout state and their telematics view; read an asset's attachments.",
  'assets:write': 'Create, batch-create and update assets, check them out and in; attach files to assets.',
  'hours:read': 'Read meter logs (hours and odometer readings, state-only entries).',
  'hours:write': 'Log readings (single and batch) and review logs held for review.',
  'flags:read': "Read flags; read a flag's attachments.",
  'flags:write': 'Raise and resolve flags; attach files to flags.',
  'workorders:read':
    'Read work orders, repairs, service tasks, service programs and service reminders; read the attachments of ' +
    'work orders and repairs.',
  'workorders:write':
    'Create and change work orders and repairs, service tasks, programs and reminders (complete, snooze); ' +
    'attach files to work orders and repairs.',
  'tools:read': "Read tools, their custody history, utilisation and QR labels; read a tool's attachments.",
  'tools:write':
    'Create and change tools, check them out and in, report failures, adjust stock, mark serviced; ' +
    'attach files to tools.',
  'projects:read': 'Read projects and their equipment usage.',
  'projects:write': 'Create, batch-create and update projects.',
  'yards:read': 'Read yards.',
  'yards:write': 'Create, batch-create, update and delete yards.',
  'events:read': 'Read the event feed, webhook subscriptions and their deliveries.',
  'events:write': 'Create, change and delete webhook subscriptions; test, rotate secrets, resend and recover.',
  'users:read': "Read the organisation's people.",
  'users:write': 'Add, rename and remove people.',
  'keys:read': "Read the organisation's API keys (never a key itself).",
  'keys:write': 'Issue, revoke and roll API keys.',
  'telematics:read': 'Read telematics connections, their runs and their equipment mapping.',
  'telematics:write': 'Create, change, delete and sync telematics connections; map their equipment to assets.',
  'inspections:read': 'Read inspection forms, templates, submitted inspections and the fleet summary.',
  'inspections:write': 'Create, version and archive inspection forms; submit and review inspections.',
  'parts:read': 'Read parts, their stock per yard, the inventory ledger and the valuation.',
  'parts:write': 'Create, change and archive parts; adjust, count and transfer stock.',
  'organization:write': "Change the organisation's settings: currency and inventory cost method.",
  'imports:read': 'Read imports: their status, predicted actions per row and errors; read saved import mappings.',
  'imports:write':
    "Start, commit and roll back imports (with the imported type's write scope too); save import mappings.",
  'purchasing:read': 'Read vendors and purchase orders with their lines and receipts.',
  'purchasing:write': 'Create, change and archive vendors; draft, submit, cancel, close and receive purchase orders.',
  'purchasing:approve': 'Approve or reject submitted purchase orders.',
  'fuel:read': 'Read fuel entries.',
  'fuel:write': 'Record, settle, void, change and delete fuel entries (a reading on a fill is logged with it).',
  'expenses:read': 'Read expenses.',
  'expenses:write': 'Record, change and delete expenses.',
  'reports:read': "Read what assets cost: an asset's costs and depreciation schedule, and the fleet cost report.",
};

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
    /**
     * The scope by type of the record the route acts on, which the service checks once it knows the type
     * (attachments take their subject's; imports their type's, on top of `scope`): documented, one security
     * alternative per scope.
     */
    subjectScopes?: Readonly<Record<string, Scope>>;
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
