import { createLazyContext } from '../core/lazy-context.ts';

/**
 * A read that tolerates replication lag (a GET of the API, outside any write): its statements that run outside a
 * transaction may go to a replica that has replayed the organisation's last write (replicas.ts). The target is
 * chosen at the first statement and kept for the rest of the request.
 */
export interface ReadScope {
  orgId: string;
  target: Promise<ReplicaTarget | null> | null;
  /** Set when a statement of the scope wrote (a replica refused it, the primary ran it). */
  wrote: boolean;
}

/** What a read scope is routed to: a replica's pool (null: the primary). */
export interface ReplicaTarget {
  name: string;
  query(args: unknown[]): Promise<unknown>;
}

const scopes = createLazyContext<ReadScope>();

export function newReadScope(orgId: string): ReadScope {
  return { orgId, target: null, wrote: false };
}

export function runInReadScope<T>(scope: ReadScope, fn: () => T): T {
  return scopes.run(scope, fn);
}

export function currentReadScope(): ReadScope | undefined {
  return scopes.current();
}

/** Work that must see the primary even when started from a read (a write inside a GET, a key lookup). */
export function outsideReadScope<T>(fn: () => T): T {
  return scopes.exit(fn);
}
