import { describe, expect, it } from 'vitest';
import { SCOPES, type Scope } from '../../../src/core/context.ts';
import type { TestApp } from './test-app.ts';
import type { TestTenant } from './tenants.ts';

export interface SecurityRoute {
  /** How the route reads in test names, e.g. 'GET /assets/:id'. */
  label: string;
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** A path this tenant may call. For id routes, return a path with an id owned by ANOTHER organisation. */
  path: () => string;
  scope: Scope | null;
  body?: unknown;
  /** True when path() names another organisation's resource: the call must be 404, never 403 or 2xx. */
  crossTenant?: boolean;
}

/**
 * The shared security suite every route gets: 401 without a key, 403 missing_scope:<scope> with a key
 * lacking the route's scope, and 404 for another organisation's ids.
 */
export function securitySuite(name: string, ctx: () => { t: TestApp; tenant: TestTenant }, routes: SecurityRoute[]) {
  describe(`${name}: security`, () => {
    for (const route of routes) {
      describe(route.label, () => {
        it(`without a key is 401 missing_bearer`, async () => {
          const { t } = ctx();
          const res = await t.api.raw(
            route.method,
            route.path(),
            null,
            route.method === 'GET' || route.method === 'DELETE' ? undefined : (route.body ?? {}),
          );
          expect(res.statusCode, route.path()).toBe(401);
          expect(res.json()).toMatchObject({ ok: false, error: 'missing_bearer' });
        });
        if (route.scope) {
          it(`needs scope ${route.scope}`, async () => {
            const { t, tenant } = ctx();
            const other = SCOPES.filter((s) => s !== route.scope).join(',');
            const { key } = await tenant.newKey({ scopes: other });
            const res = await t.api.raw(
              route.method,
              route.path(),
              key,
              route.method === 'GET' || route.method === 'DELETE' ? undefined : (route.body ?? {}),
            );
            expect(res.statusCode, route.path()).toBe(403);
            expect(res.json()).toMatchObject({ ok: false, error: `missing_scope:${route.scope}` });
          });
        }
        if (route.crossTenant) {
          it("answers 404 for another organisation's id", async () => {
            const { t, tenant } = ctx();
            const res = await t.api.raw(
              route.method,
              route.path(),
              tenant.key,
              route.method === 'GET' || route.method === 'DELETE' ? undefined : (route.body ?? {}),
            );
            expect(res.statusCode, `${route.method} ${route.path()}: ${res.body}`).toBe(404);
            expect(res.json()).toMatchObject({ ok: false, error: 'not_found' });
          });
        }
      });
    }
  });
}
