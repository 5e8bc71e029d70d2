import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrator.ts';
import { transaction } from '../../src/db/transaction.ts';
import { emit } from '../../src/events/outbox.ts';
import { createDelivery } from '../../src/delivery/delivery.ts';
import type { Dispatcher } from '../../src/delivery/dispatcher.ts';
import { EVENT_EXAMPLES } from '../../src/delivery/event-examples.ts';
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers/db/test-database.ts';
import { makeAsset, makeWebhook } from '../helpers/app/factories.ts';
import { createTenant } from '../helpers/app/tenants.ts';
import { seedEmbeddedDatabase } from '../helpers/processes/embedded-data-dir.ts';
import {
  appOn,
  loadPublishedVerifier,
  silentLogger,
  startReceiver,
  type Receiver,
} from '../helpers/delivery/harness.ts';
import { TEST_SECRETS_KEYS } from '../helpers/run/test-env.ts';

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());

// Opens an on-disk database twice: slow on a loaded machine, hence the longer timeout.
describe('a process that stops between commit and dispatch', { timeout: 90_000 }, () => {
  it('still delivers the committed event from the next process on the same database', async () => {
    // "Processes" share only the database: PostgreSQL by URL, or an on-disk PGlite directory reopened (holding the
    // run's migrated cluster: creating one is not the subject).
    const base: TestDatabase | null = onPostgres ? await createTestDatabase() : null;
    const dir = onPostgres ? null : mkdtempSync(path.join(os.tmpdir(), 'fleet-restart-'));
    if (dir) seedEmbeddedDatabase(dir);
    const open = async (): Promise<Database> => {
      const db = base
        ? await openDatabase({ databaseUrl: base.url!, dataDir: 'unused', poolSize: 4 })
        : await openDatabase({ dataDir: dir! });
      await migrate(db.sql);
      return db;
    };
    const env = { WEBHOOK_CA_FILE: receiver.caFile };
    try {
      const dbA = await open();
      const first = await appOn(dbA, env);
      const tenant = await createTenant(dbA);
      const { secret } = await makeWebhook(first, tenant.key, {
        url: `${receiver.origin}/restart`,
        events: ['asset.created'],
      });
      const assetId = await makeAsset(first, tenant.key, { nickname: 'Survivor', assetClass: 'trailer' });
      await first.close();
      await dbA.close();
      expect(receiver.requests.filter((r) => r.path === '/restart')).toHaveLength(0);

      const dbB = await open();
      const second = await appOn(dbB, env);
      try {
        expect(await second.deps.delivery.dispatcher.dispatchOnce()).toMatchObject({ claimed: 1, delivered: 1 });
        const [req] = receiver.requests.filter((r) => r.path === '/restart');
        expect(req.json).toMatchObject({ event: 'asset.created', data: { assetId, nickname: 'Survivor' } });
        const { verifyWebhook } = await loadPublishedVerifier();
        expect(verifyWebhook(req.rawBody, req.headers, secret)).toBe(true);
      } finally {
        await second.close();
        await dbB.close();
      }
    } finally {
      await base?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!onPostgres)(
  'two dispatchers on one PostgreSQL database (skipped on PGlite: it is single-process)',
  () => {
    it('sends each of 500 deliveries exactly once, all on the first attempt', async () => {
      const base = await createTestDatabase();
      const second = await openDatabase({ databaseUrl: base.url!, dataDir: 'unused', poolSize: 10 });
      // Two instances (own instance id, own connections), one database; many small claims interleave them.
      const configOf = (id: string) =>
        loadConfig({
          SECRETS_ENCRYPTION_KEYS: TEST_SECRETS_KEYS,
          WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
          WEBHOOK_BATCH_SIZE: '10',
          WEBHOOK_CA_FILE: receiver.caFile,
          INSTANCE_ID: id,
        });
      const deliveries = [
        createDelivery({ db: base, config: configOf('one'), log: silentLogger() }),
        createDelivery({ db: second, config: configOf('two'), log: silentLogger() }),
      ];
      const dispatcherOn = (db: Database): Dispatcher => deliveries[db === base ? 0 : 1].dispatcher;
      try {
        const tenant = await createTenant(base);
        for (let s = 0; s < 5; s++) {
          await base.prisma.webhookSubscription.create({
            data: {
              orgId: tenant.orgId,
              url: `${receiver.origin}/pair`,
              events: ['tool.created'],
              secret: `whsec_${s}`,
            },
          });
        }
        await transaction(base, async (tx) => {
          for (let i = 0; i < 100; i++)
            await emit(tx, tenant.orgId, 'tool.created', { ...EVENT_EXAMPLES['tool.created'], toolId: `tool-${i}` });
        });
        expect(await base.prisma.webhookDelivery.count()).toBe(500);

        const claimedBy = [0, 0];
        const run = async (dispatcher: Dispatcher, index: number) => {
          for (;;) {
            const { claimed } = await dispatcher.dispatchOnce();
            claimedBy[index] += claimed;
            if (claimed === 0) return;
          }
        };
        await Promise.all([run(dispatcherOn(base), 0), run(dispatcherOn(second), 1)]);

        const sent = receiver.requests.filter((r) => r.path === '/pair');
        const ids = sent.map((r) => r.json.id as string);
        expect(sent).toHaveLength(500);
        expect(new Set(ids).size).toBe(500);
        expect(claimedBy[0] + claimedBy[1]).toBe(500);
        expect(claimedBy[0]).toBeGreaterThan(0);
        expect(claimedBy[1]).toBeGreaterThan(0);
        const rows = await base.prisma.webhookDelivery.groupBy({ by: ['status', 'attempts'], _count: { _all: true } });
        expect(rows).toEqual([{ status: 'DELIVERED', attempts: 1, _count: { _all: 500 } }]);
      } finally {
        for (const d of deliveries) await d.close();
        await second.close();
        await base.close();
      }
    });
  },
);
