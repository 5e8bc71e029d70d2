import net from 'node:net';
import pg from 'pg';
import { currentRequestScope, DatabaseUnavailableError } from './request-scope.ts';

type Callback = (err: Error | null, res?: unknown) => void;

/**
 * A pg.Client whose every query has a deadline. When it passes, the connection is RESET (TCP RST, which
 * also drops anything still in the kernel's send buffer) instead of merely abandoned: a COMMIT stuck in a
 * partitioned network can then never reach the server after we have answered the client with an error.
 * The pool discards the dead client on release and opens a fresh one for the next request.
 */
export function guardedClientClass(queryTimeoutMs: number): typeof pg.Client {
  return class GuardedClient extends pg.Client {
    private abortReason: string | null = null;
    /** 0 = no client-side deadline (migrations under the advisory lock may legitimately run long). */
    queryTimeoutMs = queryTimeoutMs;

    abort(reason: string): void {
      if (this.abortReason) return;
      this.abortReason = reason;
      // Tell pg-pool synchronously that this client is finished, so a release() right after cannot
      // hand a connection with a half-done transaction to the next caller.
      (this as unknown as { _queryable: boolean })._queryable = false;
      const stream = (
        this as unknown as { connection: { stream: { resetAndDestroy?: () => void; destroy: () => void } } }
      ).connection.stream;
      if (typeof stream.resetAndDestroy === 'function') stream.resetAndDestroy();
      else stream.destroy();
      try {
        this.cancelRunningStatement();
      } catch {
        // Best effort: the statement timeout still ends it.
      }
    }

    /**
     * The reset alone does not stop a statement the server is still running: it notices the closed socket only
     * when it answers, so a self-committing statement waiting for a lock would commit once it got it. A
     * CancelRequest (protocol message on a connection of its own, before any authentication) ends it now.
     */
    private cancelRunningStatement(): void {
      const self = this as unknown as { processID: number | null; secretKey: number | null; _activeQuery: unknown };
      if (!self.processID || self.secretKey == null || !self._activeQuery) return;
      sendCancelRequest(this.host, this.port, self.processID, self.secretKey);
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
      const first = args[0] as { submit?: unknown } | undefined;
      // Streams and cursors (submittables) manage themselves; the app does not use them for requests.
      if (first && typeof first === 'object' && typeof first.submit === 'function')
        return (super.query as any)(...args);
      const handle = { abort: (reason: string) => this.abort(reason) };
      const ms = this.queryTimeoutMs;
      const timer = ms > 0 ? setTimeout(() => this.abort(`query timed out after ${ms} ms`), ms) : undefined;
      scope?.active.add(handle);
      const done = () => {
        clearTimeout(timer);
        scope?.active.delete(handle);
      };
      const last = args[args.length - 1];
      if (typeof last === 'function') {
        args[args.length - 1] = (err: Error | null, res: unknown) => {
          done();
          (last as Callback)(err ? this.explain(err) : null, res);
        };
        return (super.query as any)(...args);
      }
      return ((super.query as any)(...args) as Promise<unknown>).then(
        (res) => {
          done();
          return res;
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

/**
 * PostgreSQL's CancelRequest: length 16, code 80877102, the backend's process id and secret key, sent as the
 * first and only message of a new connection (a Unix socket when host is a directory). Fire and forget: a
 * partitioned server never answers, so the socket is dropped after 2 s whatever happens.
 */
function sendCancelRequest(host: string, port: number, processId: number, secretKey: number): void {
  const message = Buffer.alloc(16);
  message.writeInt32BE(16, 0);
  message.writeInt32BE(80877102, 4);
  message.writeInt32BE(processId, 8);
  message.writeInt32BE(secretKey, 12);
  const socket = host.startsWith('/') ? net.connect(`${host}/.s.PGSQL.${port}`) : net.connect(port, host);
  socket.on('error', () => {});
  socket.setTimeout(2_000, () => socket.destroy());
  socket.on('connect', () => socket.end(message));
}
