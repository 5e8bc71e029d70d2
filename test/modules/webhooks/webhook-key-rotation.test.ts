import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../../../src/cli/admin.ts';
import { loadConfig } from '../../../src/config.ts';
import { createKeyring, parseEncryptionKeys, type EncryptionKey } from '../../../src/core/secret-keys.ts';
import { openDatabase, type Database } from '../../../src/db/database.ts';
import { createSecretBox } from '../../../src/security/secret-box.ts';
import { createWebhookSecretStore } from '../../../src/modules/webhooks/webhook-secrets.repository.ts';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { makeWebhook } from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import {
  appOn,
  eventually,
  loadPublishedVerifier,
  startReceiver,
  type Receiver,
} from '../../helpers/delivery/harness.ts';

const key = (id: string) => `${id}:${randomBytes(32).toString('base64')}`;
const K1 = key('k1');
const K2 = key('k2');

let t: TestApp;
let acme: TestTenant;
let receiver: Receiver;
let second: Database | undefined;
let verifyWebhook: Awaited<ReturnType<typeof loadPublishedVerifier>>['verifyWebhook'];
const subs: { subscriptionId: string; secret: string; path: string; previous?: string }[] = [];

beforeAll(async () => {
  receiver = await startReceiver();
  ({ verifyWebhook } = await loadPublishedVerifier());
  // Everything is first sealed under k1 alone.
  t = await createTestApp({ SECRETS_ENCRYPTION_KEYS: K1, WEBHOOK_CA_FILE: receiver.caFile });
  acme = await t.tenant('Keyed');
  for (let i = 0; i < 8; i++) {
    const path = `/r${i}`;
    subs.push({
      ...(await makeWebhook(t, acme.key, { url: `${receiver.origin}${path}`, events: ['asset.created'] })),
      path,
    });
  }
  for (const s of subs.slice(0, 2)) {
    const rotated = (await t.api.post(`/api/v1/webhooks/${s.subscriptionId}/rotate-secret`, acme.key, {})).json();
    Object.assign(s, { previous: s.secret, secret: rotated.secret });
  }
});
afterAll(async () => {
  await t.close();
  await second?.close();
  await receiver.close();
});

const keyIds = async () =>
  t.db.sql.query<{ id: string; cur: string; prev: string | null }>(
    `SELECT id, split_part("secretCiphertext", ':', 2) AS cur, split_part("previousSecretCiphertext", ':', 2) AS prev
     FROM webhook_subscriptions ORDER BY id`,
  );

async function adminRun(keys: string, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const config = loadConfig({ SECRETS_ENCRYPTION_KEYS: keys });
  const code = await runAdminCommand(t.db, config, argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('admin secrets rotate-key', () => {
  it('re-encrypts every row under the new key while two instances keep delivering, resumably', async () => {
    // Two instances holding k2 (which encrypts) and k1, dispatching continuously. On PostgreSQL the second
    // one has a pool of its own, as another process would.
    second = t.db.url ? await openDatabase({ databaseUrl: t.db.url, dataDir: 'unused', poolSize: 4 }) : undefined;
    // One row at a time per instance: a claim that comes back first cannot take every due row (they trickle in
    // here), so both instances deliver whichever is woken first.
    const env = {
      SECRETS_ENCRYPTION_KEYS: `${K2},${K1}`,
      WEBHOOK_CA_FILE: receiver.caFile,
      WEBHOOK_POLL_MS: '50',
      WEBHOOK_CONCURRENCY: '1',
      METRICS_TOKEN: 'metrics-token-for-tests',
    };
    const one = await appOn(t.db, { ...env, INSTANCE_ID: 'one' });
    const two = await appOn(second ?? t.db, { ...env, INSTANCE_ID: 'two' });
    await one.deps.delivery.start();
    await two.deps.delivery.start();
    try {
      let produced = 0;
      let producing = true;
      const producer = (async () => {
        for (let i = 0; producing && i < 200; i++) {
          await t.api.post('/api/v1/assets', acme.key, { nickname: `Unit ${i}`, assetClass: 'trailer' });
          produced++;
          await new Promise((r) => setTimeout(r, 15));
        }
      })();
      await eventually(() => receiver.requests.length >= 8, 10_000);

      // An interrupted run (stopped after its first batch of one row) ...
      const k2k1 = parseEncryptionKeys(`${K2},${K1}`) as EncryptionKey[];
      const store = createWebhookSecretStore(t.db, createSecretBox(createKeyring(k2k1)));
      const stop = new Error('interrupted');
      await expect(
        store.reseal('not-primary', {
          batch: 1,
          onProgress: () => {
            throw stop;
          },
        }),
      ).rejects.toBe(stop);
      expect((await keyIds()).filter((r) => r.cur === 'k2')).toHaveLength(1);
      // ... is finished by the command, which only sees what is left.
      const run = await adminRun(`${K2},${K1}`, 'secrets', 'rotate-key', '--batch', '2', '--json');
      expect(run.code, run.err).toBe(0);
      expect(JSON.parse(run.out)).toMatchObject({ keyId: 'k2', total: 7, resealed: 7, failed: [], remaining: 0 });
      expect(run.err).toContain('re-encrypting webhook secrets under key "k2"');
      expect(run.err).toMatch(/ 7\/7 rows \(0 failed\)/);
      producing = false;
      await producer;

      for (const r of await keyIds()) {
        expect(r.cur).toBe('k2');
        expect([null, 'k2']).toContain(r.prev);
      }
      // Every delivery arrived once, signed with the secrets the API issued; none failed meanwhile.
      await eventually(
        async () => (await t.db.prisma.webhookDelivery.count({ where: { status: 'DELIVERED' } })) === produced * 8,
        20_000,
      );
      expect(await t.db.prisma.webhookDelivery.count({ where: { NOT: { error: null } } })).toBe(0);
      // Both instances took part (on PostgreSQL: PGlite is one process by construction, and there the two share
      // one connection, so the first to poll may take every row).
      const delivered = async (app: typeof one) =>
        (await app.deps.metrics.registry!.getSingleMetric('webhook_deliveries_total')!.get()).values
          .filter((v) => v.labels.outcome === 'delivered')
          .reduce((n, v) => n + v.value, 0);
      const [byOne, byTwo] = [await delivered(one), await delivered(two)];
      expect(byOne + byTwo).toBe(produced * 8);
      if (second) expect(Math.min(byOne, byTwo)).toBeGreaterThan(0);
      for (const s of subs) {
        const got = receiver.requests.filter((r) => r.path === s.path);
        expect(got).toHaveLength(produced);
        for (const req of got) {
          expect(verifyWebhook(req.rawBody, req.headers, s.secret)).toBe(true);
          if (s.previous) expect(verifyWebhook(req.rawBody, req.headers, s.previous)).toBe(true);
        }
      }
      // Run again: nothing left to do.
      expect(JSON.parse((await adminRun(`${K2},${K1}`, 'secrets', 'rotate-key', '--json')).out)).toMatchObject({
        total: 0,
      });
    } finally {
      await one.close();
      await two.close();
    }
  });

  it('then k1 can go: after a restart with k2 alone both live secrets of a rotated subscription sign', async () => {
    const restarted = await appOn(t.db, { SECRETS_ENCRYPTION_KEYS: K2, WEBHOOK_CA_FILE: receiver.caFile });
    try {
      const res = await restarted.api.post(`/api/v1/webhooks/${subs[0].subscriptionId}/test`, acme.key);
      expect(res.json()).toMatchObject({ delivered: true });
      const req = receiver.requests.filter((r) => r.path === subs[0].path).at(-1)!;
      expect(verifyWebhook(req.rawBody, req.headers, subs[0].secret)).toBe(true);
      expect(verifyWebhook(req.rawBody, req.headers, subs[0].previous!)).toBe(true);
    } finally {
      await restarted.close();
    }
  });

  it('reports rows whose key is missing, skips them, and exits 1', async () => {
    const run = await adminRun(key('k3'), 'secrets', 'rotate-key', '--json');
    expect(run.code).toBe(1);
    expect(JSON.parse(run.out)).toMatchObject({ keyId: 'k3', total: 8, resealed: 0, remaining: 0 });
    expect(run.err).toContain('is encrypted with key "k2", which is not in SECRETS_ENCRYPTION_KEYS');
    expect(run.err.split('\n').at(-1)).toMatch(/^error: 8 row\(s\) could not be re-encrypted/);
    expect((await adminRun(K2, 'secrets', 'rotate-key', '--batch', '0')).err).toContain('--batch must be');
  });
});
