import { Prisma } from '../../generated/prisma/client.ts';

/**
 * True for Prisma's unique-constraint violation (P2002). Services pre-check uniqueness for a friendly
 * error, but two concurrent transactions can both pass the pre-check; the database index is the arbiter.
 */
export function isUniqueViolation(err: unknown): boolean {
  return err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002';
}
