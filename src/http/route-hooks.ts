import type { RouteOptions } from 'fastify';

/** The methods that can change data: a route of one of them may write, so it gets what a write needs. */
export const WRITE_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

type HookName = 'onRequest' | 'preValidation' | 'onResponse';

/**
 * Adds a hook to one route, from an onRoute hook: work that only some routes need (or that needs what the route
 * declares, known once here rather than read from request.routeOptions on every request) is then paid by those
 * routes only. Route hooks run after the instance's hooks of the same name; `first` puts this one ahead of the
 * route's own.
 */
export function addRouteHook(route: RouteOptions, name: HookName, hook: unknown, where: 'first' | 'last' = 'last') {
  const current = route[name] as unknown;
  const list = current === undefined ? [] : Array.isArray(current) ? current : [current];
  (route as unknown as Record<HookName, unknown[]>)[name] = where === 'first' ? [hook, ...list] : [...list, hook];
}
