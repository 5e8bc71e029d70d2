import type { Prisma } from '../generated/prisma/client.ts';
import type { Database } from './database.ts';

export type Tx = Prisma.TransactionClient;

/**
 * One use case, one transaction: the state change and the events it emits commit or roll back together.
 * The generous maxWait covers PGlite, which runs one transaction at a time (on PostgreSQL the pool's
 * connect timeout answers first). A transaction can never commit after its request was answered with an
 * error: every query has a deadline that resets the connection (guarded-client.ts), and the request
 * deadline resets the request's connections and refuses its further queries, COMMIT included
 * (request-scope.ts); the server then rolls the transaction back.
 */
export function transaction<T>(db: Database, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return db.prisma.$transaction(fn, { maxWait: 15_000, timeout: 30_000 });
}
