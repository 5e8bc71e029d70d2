import { createLazyContext } from '../core/lazy-context.ts';

/**
 * The database work of one HTTP request. When the request's deadline passes, the request is answered
 * with an error; from then on the work must never commit: connections the request is using are reset
 * (the server rolls the open transaction back) and any further query, COMMIT included, is refused.
 */
export interface RequestScope {
  expired: boolean;
  /**
   * What the deadline must stop: connections with a query of this request in flight (reset) and the
   * request's open transaction (rolled back).
   */
  readonly active: Set<{ abort(reason: string): void }>;
}

// Only requests that can change data (POST, PUT, PATCH, DELETE) run in a scope: see request-deadline.ts.
const scopes = createLazyContext<RequestScope>();

export function runInRequestScope<T>(scope: RequestScope, fn: () => T): T {
  return scopes.run(scope, fn);
}

export function currentRequestScope(): RequestScope | undefined {
  return scopes.current();
}

/** Whether request scopes are being tracked now (a write ran within the last second): for tests. */
export const requestScopesTracked = (): boolean => scopes.tracking();

export function newRequestScope(): RequestScope {
  return { expired: false, active: new Set() };
}

/** Marks the scope expired and resets every connection it is using. */
export function expireRequestScope(scope: RequestScope): void {
  scope.expired = true;
  for (const conn of scope.active) conn.abort('request deadline passed');
  scope.active.clear();
}

/** Raised for database work that cannot proceed: unreachable, refused, timed out or past the request's deadline. */
export class DatabaseUnavailableError extends Error {
  readonly code = 'DATABASE_UNAVAILABLE';
}
