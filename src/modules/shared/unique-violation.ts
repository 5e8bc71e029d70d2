import { Prisma } from '../../generated/prisma/client.ts';

/**
 * True for a unique-constraint violation: Prisma's P2002, or SQLSTATE 23505 from a raw statement (P2010 on
 * the driver adapters), or from the driver itself. Services pre-check uniqueness for a friendly error, but
 * two concurrent transactions can both pass the pre-check; the database index is the arbiter.
 */
export function isUniqueViolation(err: unknown): boolean {
  // pg's DatabaseError and PGlite's error carry the SQLSTATE themselves (raw transactions, db.sqlTransaction).
  if ((err as { code?: unknown } | null)?.code === '23505' && !(err instanceof Prisma.PrismaClientKnownRequestError))
    return true;
  if (!(err instanceof Prisma.PrismaClientKnownRequestError)) return false;
  if (err.code === 'P2002') return true;
  const meta = err.meta as
    { code?: unknown; driverAdapterError?: { cause?: { originalCode?: unknown; kind?: unknown } } } | undefined;
  return (
    err.code === 'P2010' &&
    (meta?.code === '23505' ||
      meta?.driverAdapterError?.cause?.originalCode === '23505' ||
      meta?.driverAdapterError?.cause?.kind === 'UniqueConstraintViolation')
  );
}
