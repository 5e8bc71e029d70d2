import { DatabaseUnavailableError } from './request-scope.ts';

// Socket-level failures: the database is unreachable, refusing or dropped us.
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
]);
// PostgreSQL SQLSTATEs meaning "not now": cancelled by statement_timeout, shutting down, too many
// connections, idle-in-transaction timeout, and class 08 (connection exceptions).
const PG_UNAVAILABLE = /^(57014|57P01|57P02|57P03|53300|25P03|08...)$/;
// Prisma: can't reach / timed out / connection closed / pool timeout / transaction could not start or expired.
const PRISMA_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2028']);
const ADAPTER_KINDS = new Set([
  'DatabaseNotReachable',
  'SocketTimeout',
  'ConnectionClosed',
  'TooManyConnections',
  'TransactionAlreadyClosed',
]);
const MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Connection is closed/;

/**
 * True when an error means "the database cannot serve this request right now" rather than a bug:
 * it becomes a 503 database_unavailable with Retry-After instead of a 500. Prisma wraps driver errors
 * several layers deep (cause, meta.driverAdapterError.cause), so the whole chain is inspected.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const seen = new Set<unknown>();
  const stack: unknown[] = [err];
  while (stack.length && seen.size < 50) {
    const e = stack.pop() as Record<string, any> | null | undefined;
    if (!e || typeof e !== 'object' || seen.has(e)) continue;
    seen.add(e);
    if (
      e instanceof DatabaseUnavailableError ||
      e.code === 'DATABASE_UNAVAILABLE' ||
      e.originalCode === 'DATABASE_UNAVAILABLE'
    )
      return true;
    if (
      typeof e.code === 'string' &&
      (NETWORK_CODES.has(e.code) || PRISMA_CODES.has(e.code) || PG_UNAVAILABLE.test(e.code))
    )
      return true;
    if (
      typeof e.originalCode === 'string' &&
      (NETWORK_CODES.has(e.originalCode) || PG_UNAVAILABLE.test(e.originalCode))
    )
      return true;
    if (typeof e.kind === 'string' && ADAPTER_KINDS.has(e.kind)) return true;
    if (typeof e.message === 'string' && MESSAGES.test(e.message)) return true;
    if (Array.isArray(e.errors)) stack.push(...e.errors); // AggregateError (connecting to several addresses)
    stack.push(e.cause, e.meta, e.driverAdapterError);
  }
  return false;
}
