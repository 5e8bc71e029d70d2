import net from 'node:net';
import pg from 'pg';
import { currentRequestScope, DatabaseUnavailableError } from './request-scope.ts';

type Callback = (err: Error | null, res?: unknown) => void;

/** The deadlines a guarded client enforces (DatabaseTimeouts in database.ts). */
export interface ClientDeadlines {
  statementMs: number;
  idleInTransactionMs: number;
  queryMs: number;
}

/** How long an abort waits for its CancelRequest to be handed over before resetting the connection. */
const CANCEL_GRACE_MS = 500;

/**
 * A pg.Client whose every query has a deadline, with no session state, so that it works the same on a direct
 * connection and through a transaction pooler (PgBouncer in transaction mode hands each transaction to any server
 * connection, and refuses startup parameters such as statement_timeout):
 *
 * - A transaction's server-side timeouts are set with SET LOCAL in the same simple query as its BEGIN (no extra
 *   round trip): every `BEGIN` sent through this client becomes `BEGIN; SET LOCAL statement_timeout …;
 *   SET LOCAL idle_in_transaction_session_timeout …`. That covers Prisma's interactive transactions (the pg
 *   adapter sends a bare BEGIN), rawTransaction and the ambient transaction.
 * - A statement sent outside a transaction commits by itself; SET LOCAL around it would cost two more round
 *   trips, so its statement timeout is kept here: past `statementMs` a CancelRequest ends it, exactly as the
 *   server's statement_timeout would (SQLSTATE 57014), and the connection is discarded afterwards (a late cancel
 *   must not hit its next statement).
 * - Past `queryMs` with no answer (a partition, a hung server) the connection is RESET (TCP RST, which also drops
 *   anything still in the kernel's send buffer) instead of merely abandoned: a COMMIT stuck in a partitioned
 *   network can then never reach the server after we have answered the client with an error. The pool discards
 *   the dead client on release and opens a fresh one for the next request.
 */
export function guardedClientClass(
  deadlines: ClientDeadlines,
  preparedStatements: boolean | 'auto' = 'auto',
): typeof pg.Client {
  const beginSql =
    `BEGIN; SET LOCAL statement_timeout = ${Math.trunc(deadlines.statementMs)}; ` +
    `SET LOCAL idle_in_transaction_session_timeout = ${Math.trunc(deadlines.idleInTransactionMs)}`;
  return class GuardedClient extends pg.Client {
    private abortReason: string | null = null;
    /** 0 = no client-side deadlines and no SET LOCAL timeouts (migrations under their lock may run long). */
    queryTimeoutMs = deadlines.queryMs;
    /** Whether a statement's name is sent (a named prepared statement) or dropped (parsed per call). */
    namedStatements = preparedStatements === true;

    /**
     * With `auto`, a new connection checks whether it is a server session of its own: a direct connection announces
     * its server process in BackendKeyData, and pg_backend_pid() is that process; a pooler (PgBouncer, RDS Proxy,
     * Supavisor) announces keys of its own, so they differ there. One round trip per new connection.
     */
    override connect(callback?: any): any {
      const ready = (super.connect() as unknown as Promise<unknown>).then(async () => {
        if (preparedStatements === 'auto') this.namedStatements = await this.isDirectSession().catch(() => false);
        return this;
      });
      if (!callback) return ready;
      ready.then(
        () => callback(null, this),
        (err: Error) => callback(err),
      );
      return undefined;
    }

    private async isDirectSession(): Promise<boolean> {
      const { rows } = (await this.query('SELECT pg_backend_pid() AS pid')) as { rows: { pid: number }[] };
      return rows[0]?.pid === (this as unknown as { processID: number | null }).processID;
    }

    abort(reason: string): void {
      if (this.abortReason) return;
      this.abortReason = reason;
      // Tell pg-pool synchronously that this client is finished, so a release() right after cannot
      // hand a connection with a half-done transaction to the next caller.
      (this as unknown as { _queryable: boolean })._queryable = false;
      const self = this as unknown as { _activeQuery: unknown; _txStatus?: string | null };
      // Inside a transaction the reset is what ends it (the server rolls back once the connection is gone): reset
      // at once, then cancel. A statement that commits by itself is not stopped by the reset: the server notices
      // the closed socket only when it answers, so one waiting for a lock would commit once it got it. Only a
      // CancelRequest ends it, and through a pooler the cancel is forwarded only while our connection is still
      // linked to the server's: cancel first, and reset once the cancel was handed over.
      if (self._activeQuery && self._txStatus === 'I' && this.cancelRunningStatement(() => this.reset())) return;
      this.reset();
      this.cancelRunningStatement();
    }

    private reset(): void {
      const stream = (
        this as unknown as { connection: { stream: { resetAndDestroy?: () => void; destroy: () => void } } }
      ).connection.stream;
      if (typeof stream.resetAndDestroy === 'function') stream.resetAndDestroy();
      else stream.destroy();
    }

    /** A CancelRequest for the statement in flight; false when there is none or no key to cancel it with. */
    private cancelRunningStatement(onHandedOver?: () => void): boolean {
      const self = this as unknown as { processID: number | null; secretKey: number | null; _activeQuery: unknown };
      if (!self.processID || self.secretKey == null || !self._activeQuery) return false;
      try {
        sendCancelRequest(this.host, this.port, self.processID, self.secretKey, onHandedOver);
        return true;
      } catch {
        return false; // best effort: the server-side timeouts still end it
      }
    }

    // pg's own query_timeout only abandons the query; the connection would carry on (mid-transaction).
    override query(...args: unknown[]): any {
      const scope = currentRequestScope();
      // Past the deadline this connection may hold the request's open transaction: reset it, never COMMIT.
      if (scope?.expired) {
        this.abort('request deadline passed');
        return this.refuse(args, 'request deadline passed');
      }
      if (this.abortReason) return this.refuse(args, this.abortReason);
      const first = args[0] as { submit?: unknown; text?: unknown } | string | undefined;
      // Streams and cursors (submittables) manage themselves; the app does not use them for requests.
      if (first && typeof first === 'object' && typeof first.submit === 'function')
        return (super.query as any)(...args);
      const ms = this.queryTimeoutMs;
      const text = typeof first === 'string' ? first : typeof first?.text === 'string' ? first.text : '';
      const begin = ms > 0 && BARE_BEGIN.test(text);
      if (begin)
        args[0] = typeof first === 'string' ? beginSql : { ...(first as object), text: beginSql, name: undefined };
      else if (!this.namedStatements && first && typeof first === 'object' && (first as { name?: unknown }).name)
        args[0] = { ...first, name: undefined }; // not a session of its own: a named statement may be on another
      const selfCommitting = ms > 0 && !begin && (this as unknown as { _txStatus?: string | null })._txStatus === 'I';
      const handle = { abort: (reason: string) => this.abort(reason) };
      const timer = ms > 0 ? setTimeout(() => this.abort(`query timed out after ${ms} ms`), ms) : undefined;
      let cancelled = false;
      const statementTimer =
        selfCommitting && deadlines.statementMs > 0 && deadlines.statementMs < ms
          ? setTimeout(() => (cancelled = this.cancelRunningStatement()), deadlines.statementMs)
          : undefined;
      scope?.active.add(handle);
      const done = () => {
        clearTimeout(timer);
        clearTimeout(statementTimer);
        scope?.active.delete(handle);
        // A cancel that arrives after the statement ended would hit the connection's next one: not reused.
        if (cancelled) (this as unknown as { _queryable: boolean })._queryable = false;
      };
      // BEGIN plus its SET LOCALs answer one result each: the caller asked for one statement.
      const result = (res: unknown) => (begin && Array.isArray(res) ? res[0] : res);
      const last = args[args.length - 1];
      if (typeof last === 'function') {
        args[args.length - 1] = (err: Error | null, res: unknown) => {
          done();
          (last as Callback)(err ? this.explain(err) : null, err ? res : result(res));
        };
        return (super.query as any)(...args);
      }
      return ((super.query as any)(...args) as Promise<unknown>).then(
        (res) => {
          done();
          return result(res);
        },
        (err: Error) => {
          done();
          throw this.explain(err);
        },
      );
    }

    private explain(err: Error): Error {
      return this.abortReason
        ? new DatabaseUnavailableError(`database connection reset: ${this.abortReason}`, { cause: err })
        : err;
    }

    private refuse(args: unknown[], reason: string): Promise<never> | undefined {
      const err = new DatabaseUnavailableError(`database work refused: ${reason}`);
      const last = args[args.length - 1];
      if (typeof last === 'function') {
        process.nextTick(() => (last as Callback)(err));
        return undefined;
      }
      return Promise.reject(err);
    }
  } as unknown as typeof pg.Client;
}

/** A transaction's opening statement as the pg adapter, rawTransaction and the ambient engine send it. */
const BARE_BEGIN = /^\s*BEGIN\s*;?\s*$/i;

/**
 * PostgreSQL's CancelRequest: length 16, code 80877102, the backend's process id and secret key, sent as the
 * first and only message of a new connection (a Unix socket when host is a directory). The peer closes the
 * connection once it has acted on it: that is when `onHandedOver` runs (or after CANCEL_GRACE_MS, or on an
 * error). The socket is never closed first: PgBouncer 1.18 crashes (FATAL "bad client state") when a cancel
 * connection closes before it has forwarded the request. A partitioned server never answers, so the socket is
 * dropped after 10 s whatever happens.
 */
function sendCancelRequest(
  host: string,
  port: number,
  processId: number,
  secretKey: number,
  onHandedOver?: () => void,
) {
  const message = Buffer.alloc(16);
  message.writeInt32BE(16, 0);
  message.writeInt32BE(80877102, 4);
  message.writeInt32BE(processId, 8);
  message.writeInt32BE(secretKey, 12);
  let handedOver = false;
  const handOver = () => {
    if (handedOver) return;
    handedOver = true;
    clearTimeout(grace);
    onHandedOver?.();
  };
  const grace = setTimeout(handOver, CANCEL_GRACE_MS);
  grace.unref();
  const socket = host.startsWith('/') ? net.connect(`${host}/.s.PGSQL.${port}`) : net.connect(port, host);
  socket.on('error', handOver);
  socket.on('close', handOver);
  socket.on('end', () => socket.destroy());
  socket.setTimeout(10_000, () => socket.destroy());
  socket.on('connect', () => socket.write(message));
}
