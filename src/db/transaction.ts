import type { Prisma } from '../generated/prisma/client.ts';
import type { Database } from './database.ts';

export type Tx = Prisma.TransactionClient;

/**
 * One use case, one transaction: the state change and the events it emits commit or roll back together.
 * The generous maxWait covers PGlite, which runs one transaction at a time.
 */
export function transaction<T>(db: Database, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return db.prisma.$transaction(fn, { maxWait: 15_000, timeout: 30_000 });
}
