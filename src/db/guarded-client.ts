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
      this.cancelRunningStatement();
      // Tell pg-pool synchronously that this client is finished, so a release() right after cannot
      // hand a connection with a half-done transaction to the next caller.
      (this as unknown as { _queryable: boolean })._queryable = false;
      const stream = (
        this as unknown as { connection: { stream: { resetAndDestroy?: () => void; destroy: () => void } } }
      ).connection.stream;
      if (typeof stream.resetAndDestroy === 'function') stream.resetAndDestroy();
      else stream.destroy();
    }

    /**
     * The reset alone does not stop a statement the server is still running: it notices the closed socket only
     * when it answers, so a self-committing statement waiting for a lock would commit once it got it. A
     * CancelRequest (on a connection of its own, as PostgreSQL's protocol has it) ends it now.
     */
    private cancelRunningStatement(): void {
      const self = this as unknown as {
        processID: number | null;
        activeQuery: unknown;
        host: string;
        port: number;
        connectionParameters: { ssl?: unknown };
      };
      if (!self.processID || !self.activeQuery) return;
      const canceller = new pg.Client({
        host: self.host,
        port: self.port,
        ssl: self.connectionParameters.ssl as pg.ClientConfig['ssl'],
      });
      const connection = (
        canceller as unknown as { connection: { on(e: string, f: () => void): void; stream?: { destroy(): void } } }
      ).connection;
      connection.on('error', () => {});
      // A partitioned server never answers: give up on the cancel rather than keep its socket.
      setTimeout(() => connection.stream?.destroy(), 2_000).unref();
      (canceller as unknown as { cancel(client: unknown, query: unknown): void }).cancel(this, self.activeQuery);
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
