// Runs of telematics connections: the scheduler tick (due connections, claimed with their lease) and the executor
// that pages through a feed, one committed page at a time, and ends the run with its outcome.
import { randomUUID } from 'node:crypto';
import type { ServiceDeps } from '../../service-deps.ts';
import type { TelematicsConnection } from '../../generated/prisma/client.ts';
import { SecretUnavailableError } from '../../security/secret-box.ts';
import type { FeedAuth, FeedClient } from './telematics-feed.adapter.ts';
import { FeedError } from './telematics-parse.adapter.ts';
import { secretSubject } from './telematics-secrets.repository.ts';
import { emptyCounters, ingestPage, type PageRun } from './telematics-ingest.operations.ts';
import { beginRun, claimConnection, claimDue, finishRun, renewLease, runningRun } from './telematics-run.operations.ts';

/** Runs one instance executes at once; the tick claims no more than the free slots. */
const MAX_ACTIVE_RUNS = 4;

type Deps = Pick<ServiceDeps, 'db' | 'log' | 'background' | 'config' | 'secretBox' | 'metrics'>;

export function createTelematicsSync({ db, log, background, config, secretBox, metrics }: Deps, client: FeedClient) {
  const settings = config.telematics;
  // Unique per process: two processes started with the same INSTANCE_ID still hold leases of their own.
  const owner = `${config.instanceId}:${randomUUID().slice(0, 8)}`;
  const stopping = new AbortController();
  let active = 0;

  function authOf(c: TelematicsConnection): FeedAuth {
    const secret = () => {
      if (!c.secretCiphertext) throw new FeedError('the connection has no stored secret');
      try {
        return secretBox.openSecret(secretSubject(c.id), 'current', c.secretCiphertext);
      } catch (err) {
        if (err instanceof SecretUnavailableError)
          throw new FeedError(`the connection's secret cannot be decrypted (${err.reason}); set its auth again`);
        throw err;
      }
    };
    switch (c.authType) {
      case 'basic':
        return { type: 'basic', username: c.authUsername ?? '', password: secret() };
      case 'bearer':
        return { type: 'bearer', token: secret() };
      case 'oauth2-client-credentials':
        return {
          type: 'oauth2-client-credentials',
          tokenUrl: c.authTokenUrl ?? '',
          clientId: c.authClientId ?? '',
          clientSecret: secret(),
          scope: c.authScope,
        };
      default:
        return { type: 'none' };
    }
  }

  async function pages(c: TelematicsConnection, run: PageRun, signal: AbortSignal) {
    const auth = authOf(c);
    const origin = new URL(c.fleetUrl).origin;
    const read = new Set<string>();
    let url = c.fleetUrl;
    for (;;) {
      if (run.counters.pages >= settings.maxPages)
        throw new FeedError(`the feed has more than ${settings.maxPages} pages (TELEMATICS_MAX_PAGES)`);
      read.add(url);
      const page = await client.fetchPage(c.id, auth, url, signal);
      if (page.equipment.length === 0) {
        run.counters.pages++;
        return;
      }
      await ingestPage(db, run, page.equipment);
      if (!page.next) return;
      let next: URL;
      try {
        next = new URL(page.next, url);
      } catch {
        throw new FeedError('the next link is not a URL');
      }
      if (next.origin !== origin)
        throw new FeedError(`the next link points at another host (${next.host}); only ${origin} is followed`);
      if (next.username || next.password) throw new FeedError('the next link carries credentials; it is not followed');
      // Some feeds point next at the page itself (or back) on the last page.
      if (read.has(next.href)) return;
      url = next.href;
    }
  }

  async function execute(c: TelematicsConnection, runId: string) {
    const counters = emptyCounters();
    const run: PageRun = {
      runId,
      connectionId: c.id,
      ctx: { orgId: c.orgId, keyId: 'telematics', actorId: null, requestId: `telematics-run:${runId}` },
      counters,
      seen: new Set(),
    };
    const abort = new AbortController();
    const onStop = () => abort.abort();
    stopping.signal.addEventListener('abort', onStop, { once: true });
    let leaseLost = false;
    const renewal = setInterval(
      () =>
        void renewLease(db, c.id, owner, settings.leaseSec).then(
          (held) => {
            if (!held) {
              leaseLost = true;
              abort.abort();
            }
          },
          (err: unknown) => log.warn({ err, connectionId: c.id }, 'telematics lease renewal failed'),
        ),
      Math.max(1000, (settings.leaseSec * 1000) / 3),
    );
    let error: string | null = null;
    try {
      await pages(c, run, abort.signal);
    } catch (err) {
      if (err instanceof FeedError) error = err.message;
      else {
        log.error({ err, connectionId: c.id, runId }, 'telematics run failed');
        error = 'internal error while storing the feed (see the server log)';
      }
    } finally {
      clearInterval(renewal);
      stopping.signal.removeEventListener('abort', onStop);
    }
    const readings = { created: counters.readingsCreated, skipped: counters.readingsSkipped };
    if (leaseLost) {
      log.warn({ connectionId: c.id, runId }, 'telematics run lost its lease; another instance took it over');
      metrics.telematicsRun('lease_lost', readings);
      return;
    }
    const interrupted = error !== null && stopping.signal.aborted;
    if (error) log.info({ connectionId: c.id, runId, error, interrupted }, 'telematics run failed');
    await finishRun(db, c, runId, owner, counters, error, interrupted);
    metrics.telematicsRun(interrupted ? 'interrupted' : error ? 'failed' : 'succeeded', readings);
  }

  function launch(c: TelematicsConnection, runId: string) {
    active++;
    background.run('telematics-run', { connectionId: c.id, runId }, () =>
      execute(c, runId).finally(() => {
        active--;
      }),
    );
  }

  return {
    /**
     * A sync asked for: starts a run now in this instance's background, or answers the running run's id.
     * Null when the connection is not the organisation's.
     */
    async start(orgId: string, connectionId: string): Promise<string | null> {
      const claimed = await claimConnection(db, orgId, connectionId, owner, settings.leaseSec);
      if (!claimed) {
        const exists = await db.prisma.telematicsConnection.findFirst({ where: { id: connectionId, orgId } });
        if (!exists) return null;
        const running = await runningRun(db, connectionId);
        if (running) return running.id;
        // Held by a run between its claim and its run row: that run is the answer once it exists.
        await new Promise((r) => setTimeout(r, 50));
        return (await runningRun(db, connectionId))?.id ?? null;
      }
      const run = await beginRun(db, claimed, 'manual');
      launch(claimed, run.id);
      return run.id;
    },

    /** The scheduler: due, enabled connections whose lease is free, as many as this instance has slots for. */
    async tick() {
      if (stopping.signal.aborted) return 0;
      const free = MAX_ACTIVE_RUNS - active;
      if (free <= 0) return 0;
      const claimed = await claimDue(db, owner, settings.leaseSec, free);
      for (const c of claimed) launch(c, (await beginRun(db, c, 'scheduled')).id);
      return claimed.length;
    },

    /** Stops running runs at their next wait (they end FAILED "stopped"); background.idle() then waits for them. */
    stop() {
      stopping.abort();
    },
  };
}

export type TelematicsSync = ReturnType<typeof createTelematicsSync>;
