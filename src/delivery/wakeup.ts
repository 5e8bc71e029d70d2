import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';
import { DELIVERIES_CHANNEL, onDeliveriesQueued } from '../events/outbox.ts';

const RECONNECT_MS = 2_000;

export interface Wakeup {
  close(): Promise<void>;
}

/**
 * Calls `wake` when committed events queue deliveries. With `listenUrl` (PostgreSQL's DATABASE_DIRECT_URL) a
 * dedicated connection LISTENs to the channel emit() NOTIFYs at commit, which reaches every instance (this one
 * included); a lost connection is re-opened, and the dispatcher's poll covers the gap. Without it (PGlite, which is
 * single-process, or PostgreSQL reached only through a transaction pooler, where LISTEN has no session to live on)
 * the in-process signal wakes this instance at once, and other instances find the rows at their next poll.
 */
export function startWakeup({
  listenUrl,
  log,
  wake,
}: {
  listenUrl?: string;
  log: FastifyBaseLogger;
  wake: () => void;
}): Wakeup {
  if (!listenUrl) {
    const unsubscribe = onDeliveriesQueued(wake);
    return { close: async () => void unsubscribe() };
  }
  let client: pg.Client | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  const connect = async () => {
    const c = new pg.Client({ connectionString: listenUrl, connectionTimeoutMillis: 5_000, keepAlive: true });
    client = c;
    c.on('notification', () => wake());
    c.on('error', (err) => {
      log.warn({ err }, 'webhook wake-up connection lost; reconnecting');
      void c.end().catch(() => {});
      schedule();
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${DELIVERIES_CHANNEL}`);
      if (closed) await c.end();
      else wake(); // events committed while we were not listening
    } catch (err) {
      log.warn({ err }, 'webhook wake-up connection failed; retrying');
      void c.end().catch(() => {});
      schedule();
    }
  };
  const schedule = () => {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      void connect();
    }, RECONNECT_MS);
    retry.unref();
  };
  void connect();

  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      await client?.end().catch(() => {});
    },
  };
}
