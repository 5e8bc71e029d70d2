import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrator.ts';
import { transaction } from '../../src/db/transaction.ts';
import { createDelivery } from '../../src/delivery/delivery.ts';
import { EVENT_EXAMPLES } from '../../src/delivery/event-examples.ts';
import { emit } from '../../src/events/outbox.ts';
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers/db/test-database.ts';
import { createTenant } from '../helpers/app/tenants.ts';
import { eventually, silentLogger, startReceiver, type Receiver } from '../helpers/delivery/harness.ts';
import { seedEmbeddedDatabase } from '../helpers/processes/embedded-data-dir.ts';
import { nodeArgs } from '../helpers/processes/node-process.ts';
import { TEST_DATABASE_DIRECT, TEST_DATABASE_POOLER_URL, TEST_SECRETS_KEYS } from '../helpers/run/test-env.ts';

/** Whether this run's apps get DATABASE_DIRECT_URL (always, unless the run goes through a pooler alone). */
const listens = !TEST_DATABASE_POOLER_URL || TEST_DATABASE_DIRECT;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let receiver: Receiver;
const children: ChildProcess[] = [];
beforeAll(async () => {
  receiver = await startReceiver();
  // Every send to /hang is held until the receiver closes: the sender is "mid-send" for as long as we like.
  receiver.respond = (req) => (req.path === '/hang' ? { delayMs: 600_000 } : {});
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await receiver.close();
});

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

/** `src/main.ts` as operators run it; resolves once healthy. */
async function startApi(store: Record<string, string>, env: Record<string, string>) {
  const port = await freePort();
  const child = spawn(process.execPath, nodeArgs('src/main.ts'), {
    env: {
      PATH: process.env.PATH,
      SECRETS_ENCRYPTION_KEYS: TEST_SECRETS_KEYS,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      WEBHOOK_CA_FILE: receiver.caFile,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      ...store,
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (c) => (stderr += c));
  const exited = new Promise<{ code: number | null; at: number }>((r) =>
    child.once('exit', (code) => r({ code, at: Date.now() })),
  );
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`api exited: ${stderr}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/api/v1/health`)).ok) break;
    } catch {
      // starting
    }
    if (i > 300) throw new Error(`api did not start: ${stderr}`);
    await sleep(100);
  }
  return { child, exited, stderr: () => stderr };
}

/** A tenant subscribed to /hang with one queued delivery; returns the delivery id. */
async function queueOne(db: Database): Promise<string> {
  const tenant = await createTenant(db);
  await db.prisma.webhookSubscription.create({
    data: { orgId: tenant.orgId, url: `${receiver.origin}/hang`, events: ['tool.created'], secret: 'whsec_processes' },
  });
  await transaction(db, (tx) => emit(tx, tenant.orgId, 'tool.created', EVENT_EXAMPLES['tool.created']));
  return (await db.prisma.webhookDelivery.findFirstOrThrow()).id;
}
const sendsOf = (id: string) => receiver.requests.filter((r) => r.path === '/hang' && r.json?.id === id);

describe('SIGTERM during a send that hangs', () => {
  it(
    'aborts the send, releases the claim, finishes cleanup and exits 0 within SHUTDOWN_TIMEOUT_MS',
    { timeout: 90_000 },
    async () => {
      const base: TestDatabase | null = onPostgres ? await createTestDatabase() : null;
      const dir = mkdtempSync(path.join(os.tmpdir(), 'fleet-sigterm-'));
      seedEmbeddedDatabase(dir);
      const open = async () => {
        const db = base ?? (await openDatabase({ dataDir: dir }));
        await migrate(db.sql);
        return db;
      };
      try {
        let db = await open();
        const id = await queueOne(db);
        if (!base) await db.close(); // the embedded database belongs to one process at a time
        const store: Record<string, string> = base ? base.env : { DATA_DIR: dir };
        // The receiver would keep the send open far beyond the shutdown budget: only aborting it meets the budget.
        const api = await startApi(store, {
          WEBHOOK_TIMEOUT_MS: '60000',
          SHUTDOWN_TIMEOUT_MS: '5000',
          INSTANCE_ID: 'sigterm',
        });
        await eventually(() => sendsOf(id).length === 1, 10_000);
        if (base)
          expect(await base.prisma.webhookDelivery.findFirstOrThrow({ where: { id } })).toMatchObject({
            claimedBy: 'sigterm',
          });
        const signalledAt = Date.now();
        api.child.kill('SIGTERM');
        const { code, at } = await api.exited;
        expect(code, api.stderr()).toBe(0);
        expect(at - signalledAt).toBeLessThan(5_000);
        db = base ?? (await open()); // reopening also proves the data directory was released
        expect(await db.prisma.webhookDelivery.findFirstOrThrow({ where: { id } })).toMatchObject({
          status: 'PENDING',
          attempts: 0,
          leaseUntil: null,
          claimedBy: null,
          lastAttemptAt: null,
        });
        if (!base) await db.close();
      } finally {
        await base?.close();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});

describe.skipIf(!onPostgres)('several processes on PostgreSQL (skipped on PGlite: it is single-process)', () => {
  it(
    "takes over a crashed instance's claim in seconds: at once on restart, within a lease elsewhere",
    { timeout: 120_000 },
    async () => {
      const base = await createTestDatabase();
      try {
        const id = await queueOne(base);
        const store = base.env;
        // A long lease: only the start-up release can make the restarted instance send again soon.
        const first = await startApi(store, { INSTANCE_ID: 'api-a', WEBHOOK_LEASE_SEC: '120' });
        await eventually(() => sendsOf(id).length === 1, 10_000);
        first.child.kill('SIGKILL');
        await first.exited;
        const restartedAt = Date.now();
        const again = await startApi(store, { INSTANCE_ID: 'api-a', WEBHOOK_LEASE_SEC: '3', WEBHOOK_POLL_MS: '500' });
        await eventually(() => sendsOf(id).length === 2, 10_000);
        const restartTakeoverMs = Date.now() - restartedAt;

        // Another instance takes over once the short lease (renewed every second while the send hung) runs out.
        const other = await startApi(store, { INSTANCE_ID: 'api-b', WEBHOOK_LEASE_SEC: '3', WEBHOOK_POLL_MS: '500' });
        expect(sendsOf(id)).toHaveLength(2);
        again.child.kill('SIGKILL');
        const killedAt = Date.now();
        await again.exited;
        await eventually(() => sendsOf(id).length === 3, 30_000);
        const takeoverMs = Date.now() - killedAt;
        expect(takeoverMs).toBeLessThan(3_000 + 500 + 2_000);
        expect(await base.prisma.webhookDelivery.findFirstOrThrow({ where: { id } })).toMatchObject({
          claimedBy: 'api-b',
          attempts: 0,
        });
        console.log(
          `[processes] crash takeover: restart of the same instance ${restartTakeoverMs} ms (incl. start-up), other instance ${takeoverMs} ms after SIGKILL (lease 3 s)`,
        );
        other.child.kill('SIGKILL');
        await other.exited;
      } finally {
        await base.close();
      }
    },
  );

  // LISTEN needs a session: it is on DATABASE_DIRECT_URL, which a run through a pooler alone does not have.
  it.skipIf(!listens)(
    "wakes another instance's dispatcher through LISTEN/NOTIFY when an event commits",
    { timeout: 60_000 },
    async () => {
      const base = await createTestDatabase();
      const elsewhere = await openDatabase({ databaseUrl: base.url!, dataDir: 'unused', poolSize: 2 });
      // Only the instance on `elsewhere` dispatches, and its poll is far away: a prompt send can only come from
      // the NOTIFY.
      const config = loadConfig({
        SECRETS_ENCRYPTION_KEYS: TEST_SECRETS_KEYS,
        ...base.env,
        INSTANCE_ID: 'listener',
        WEBHOOK_POLL_MS: '600000',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        WEBHOOK_CA_FILE: receiver.caFile,
      });
      const delivery = createDelivery({ db: elsewhere, config, log: silentLogger() });
      try {
        const tenant = await createTenant(base);
        await base.prisma.webhookSubscription.create({
          data: {
            orgId: tenant.orgId,
            url: `${receiver.origin}/notified`,
            events: ['tool.created'],
            secret: 'whsec_n',
          },
        });
        await delivery.start();
        await sleep(500); // LISTEN established
        for (let i = 0; i < 3; i++) {
          const committedAt = Date.now();
          await transaction(base, (tx) =>
            emit(tx, tenant.orgId, 'tool.created', { ...EVENT_EXAMPLES['tool.created'], toolId: `n-${i}` }),
          );
          await eventually(() => receiver.requests.filter((r) => r.path === '/notified').length === i + 1, 3_000);
          expect(Date.now() - committedAt).toBeLessThan(1_000);
        }
        // A rolled-back change notifies no one.
        await transaction(base, async (tx) => {
          await emit(tx, tenant.orgId, 'tool.created', { ...EVENT_EXAMPLES['tool.created'], toolId: 'ghost' });
          throw new Error('rolled back');
        }).catch(() => {});
        await sleep(300);
        expect(receiver.requests.filter((r) => r.path === '/notified')).toHaveLength(3);
      } finally {
        await delivery.close();
        await elsewhere.close();
        await base.close();
      }
    },
  );

  it(
    "without DATABASE_DIRECT_URL another instance's dispatcher finds a committed event at its next poll",
    { timeout: 60_000 },
    async () => {
      const base = await createTestDatabase();
      const elsewhere = await openDatabase({ databaseUrl: base.url!, dataDir: 'unused', poolSize: 2 });
      // DATABASE_URL alone (as behind a transaction pooler): no LISTEN connection, the poll is what wakes it.
      const config = loadConfig({
        SECRETS_ENCRYPTION_KEYS: TEST_SECRETS_KEYS,
        DATABASE_URL: base.url!,
        INSTANCE_ID: 'poller',
        WEBHOOK_POLL_MS: '1000',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        WEBHOOK_CA_FILE: receiver.caFile,
      });
      const delivery = createDelivery({ db: elsewhere, config, log: silentLogger() });
      try {
        const tenant = await createTenant(base);
        await base.prisma.webhookSubscription.create({
          data: { orgId: tenant.orgId, url: `${receiver.origin}/polled`, events: ['tool.created'], secret: 'whsec_p' },
        });
        await delivery.start();
        for (let i = 0; i < 2; i++) {
          await transaction(base, (tx) =>
            emit(tx, tenant.orgId, 'tool.created', { ...EVENT_EXAMPLES['tool.created'], toolId: `p-${i}` }),
          );
          // At most one poll interval, plus the send.
          await eventually(() => receiver.requests.filter((r) => r.path === '/polled').length === i + 1, 3_000);
        }
        const listening = await base.sql.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%'`,
        );
        expect(listening).toEqual([{ n: 0 }]);
      } finally {
        await delivery.close();
        await elsewhere.close();
        await base.close();
      }
    },
  );
});
