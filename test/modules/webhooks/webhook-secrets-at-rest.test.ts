import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeps, type AppDeps } from '../../../src/composition.ts';
import { createKeyring } from '../../../src/core/secret-keys.ts';
import { createSecretBox } from '../../../src/security/secret-box.ts';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { onPostgres } from '../../helpers/db/test-database.ts';
import { makeAsset, makeWebhook } from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import {
  loadPublishedVerifier,
  startReceiver,
  type ReceivedRequest,
  type Receiver,
} from '../../helpers/delivery/harness.ts';

let t: TestApp;
let acme: TestTenant;
let receiver: Receiver;
let verifyWebhook: Awaited<ReturnType<typeof loadPublishedVerifier>>['verifyWebhook'];
/** Every secret the API handed out in this file, to look for afterwards. */
const issued: string[] = [];

beforeAll(async () => {
  receiver = await startReceiver();
  ({ verifyWebhook } = await loadPublishedVerifier());
  // Trace level (below debug): whatever the app logs at any level is searched for secrets.
  t = await createTestApp({
    WEBHOOK_CA_FILE: receiver.caFile,
    WEBHOOK_BREAKER_FAILURES: '1000',
    LOG_LEVEL: 'trace',
    METRICS_TOKEN: 'metrics-token-for-tests',
  });
  acme = await t.tenant('Acme');
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

async function subscribe(path: string) {
  const made = await makeWebhook(t, acme.key, { url: `${receiver.origin}${path}`, events: ['asset.created'] });
  issued.push(made.secret);
  return made;
}
const row = (id: string) => t.db.prisma.webhookSubscription.findUniqueOrThrow({ where: { id } });
const setColumns = (id: string, data: Record<string, string | null>) =>
  t.db.prisma.webhookSubscription.update({ where: { id }, data });
const testSend = (id: string) => t.api.post(`/api/v1/webhooks/${id}/test`, acme.key);
const at = (path: string) => receiver.requests.filter((r) => r.path === path);
const last = (path: string): ReceivedRequest => at(path).at(-1)!;
const verifies = (secret: string, req: ReceivedRequest) => verifyWebhook(req.rawBody, req.headers, secret);

/** Every form a secret could leak in: as returned, without whsec_, and the decoded bytes in hex and base64. */
function forms(secret: string): string[] {
  const bytes = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return [secret, secret.slice(6), bytes.toString('hex'), bytes.toString('base64'), bytes.toString('base64url')];
}
const leaked = (text: string, secrets = issued) => secrets.flatMap(forms).filter((f) => text.includes(f));

/** Flips one bit of the sealed bytes (not of the version or key id). */
function flipByte(stored: string): string {
  const cut = stored.lastIndexOf(':') + 1;
  const bytes = Buffer.from(stored.slice(cut), 'base64');
  bytes[bytes.length - 3] ^= 0x01;
  return stored.slice(0, cut) + bytes.toString('base64');
}

describe('secrets at rest', () => {
  it('stores a sealed v1 ciphertext under the first key, and opens it to the secret the API returned', async () => {
    const { subscriptionId, secret } = await subscribe('/round-trip');
    const stored = await row(subscriptionId);
    expect(stored.secret).toBeNull();
    expect(stored.previousSecret).toBeNull();
    expect(stored.secretCiphertext).toMatch(/^v1:test:[A-Za-z0-9+/]+=*$/);
    expect(leaked(JSON.stringify(stored), [secret])).toEqual([]);
    expect(t.deps.secretBox.openSecret(subscriptionId, 'current', stored.secretCiphertext!)).toBe(secret);
    // Sealing twice gives two ciphertexts (random IV) that open to the same secret.
    const again = t.deps.secretBox.sealSecret(subscriptionId, 'current', secret);
    expect(again).not.toBe(stored.secretCiphertext);
    expect(t.deps.secretBox.openSecret(subscriptionId, 'current', again)).toBe(secret);

    expect((await testSend(subscriptionId)).json()).toMatchObject({ delivered: true });
    expect(verifies(secret, last('/round-trip'))).toBe(true);
  });

  it('a rotation seals both live secrets; both sign during the overlap', async () => {
    const { subscriptionId, secret: first } = await subscribe('/rotated');
    const rotated = (await t.api.post(`/api/v1/webhooks/${subscriptionId}/rotate-secret`, acme.key, {})).json();
    issued.push(rotated.secret);
    const stored = await row(subscriptionId);
    expect(stored).toMatchObject({ secret: null, previousSecret: null });
    expect(stored.previousSecretCiphertext).toMatch(/^v1:test:/);
    expect(t.deps.secretBox.openSecret(subscriptionId, 'previous', stored.previousSecretCiphertext!)).toBe(first);
    await testSend(subscriptionId);
    expect(verifies(rotated.secret, last('/rotated'))).toBe(true);
    expect(verifies(first, last('/rotated'))).toBe(true);
  });
});

describe('tampering is detected with a clear error', () => {
  const unusable = async (id: string, reason: RegExp) => {
    const res = await testSend(id);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ ok: false, error: 'webhook_secret_unavailable' });
    expect(res.json().message).toMatch(reason);
    // The subscription itself is still readable.
    expect((await t.api.get(`/api/v1/webhooks/${id}`, acme.key)).statusCode).toBe(200);
  };

  it('a flipped byte', async () => {
    const { subscriptionId } = await subscribe('/flipped');
    const stored = await row(subscriptionId);
    await setColumns(subscriptionId, { secretCiphertext: flipByte(stored.secretCiphertext!) });
    await unusable(subscriptionId, /current secret does not decrypt with key "test": the ciphertext was altered/);
  });

  it('a ciphertext copied from another subscription, even one opened (cached) a moment ago', async () => {
    const a = await subscribe('/row-a');
    const b = await subscribe('/row-b');
    expect((await testSend(a.subscriptionId)).json()).toMatchObject({ delivered: true });
    await setColumns(b.subscriptionId, { secretCiphertext: (await row(a.subscriptionId)).secretCiphertext });
    await unusable(b.subscriptionId, /copied from another subscription or slot/);
  });

  it('the current secret copied into the previous slot during an overlap', async () => {
    const { subscriptionId } = await subscribe('/slot');
    const rotated = (await t.api.post(`/api/v1/webhooks/${subscriptionId}/rotate-secret`, acme.key, {})).json();
    issued.push(rotated.secret);
    const stored = await row(subscriptionId);
    await setColumns(subscriptionId, { previousSecretCiphertext: stored.secretCiphertext });
    await unusable(subscriptionId, /previous secret does not decrypt/);
  });
});

describe('a secret whose key is not configured', () => {
  let id: string;
  beforeAll(async () => {
    ({ subscriptionId: id } = await subscribe('/lost-key'));
    // Sealed under a key this server does not hold (as after dropping a key before rotate-key finished).
    const elsewhere = createSecretBox(createKeyring([{ id: 'gone', key: randomBytes(32) }]));
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    await setColumns(id, { secretCiphertext: elsewhere.sealSecret(id, 'current', secret) });
  });

  it('fails its deliveries with the reason, keeps them queued on the retry schedule, and sends nothing', async () => {
    await makeAsset(t, acme.key, { nickname: 'Unsigned', assetClass: 'trailer' });
    await t.deps.delivery.dispatcher.dispatchOnce();
    const [delivery] = await t.db.prisma.webhookDelivery.findMany({ where: { subscriptionId: id } });
    expect(delivery).toMatchObject({ status: 'FAILED', attempts: 1, responseStatus: null });
    expect(delivery.error).toBe(
      'not sent: the current secret is encrypted with key "gone", which is not in SECRETS_ENCRYPTION_KEYS',
    );
    expect(delivery.nextAttemptAt!.getTime()).toBeGreaterThan(Date.now());
    expect(at('/lost-key')).toHaveLength(0);
    const listed = (await t.api.get(`/api/v1/webhooks/${id}/deliveries`, acme.key)).json();
    expect(listed.deliveries[0]).toMatchObject({ status: 'FAILED', error: delivery.error });
  });

  it('answers GET, refuses the test send and a rotation with overlap, and recovers by rotating without one', async () => {
    expect((await t.api.get(`/api/v1/webhooks/${id}`, acme.key)).json()).toMatchObject({ ok: true });
    const test = await testSend(id);
    expect(test.statusCode).toBe(409);
    expect(test.json().message).toContain('key "gone", which is not in SECRETS_ENCRYPTION_KEYS');
    const overlap = await t.api.post(`/api/v1/webhooks/${id}/rotate-secret`, acme.key, {});
    expect(overlap.statusCode).toBe(409);
    expect(overlap.json().message).toContain('overlapSeconds 0');
    const fresh = await t.api.post(`/api/v1/webhooks/${id}/rotate-secret`, acme.key, { overlapSeconds: 0 });
    expect(fresh.statusCode).toBe(200);
    issued.push(fresh.json().secret);
    expect((await testSend(id)).json()).toMatchObject({ delivered: true });
    expect(verifies(fresh.json().secret, last('/lost-key'))).toBe(true);
  });
});

describe('no secret leaves in logs, errors, metrics or the event feed', () => {
  it('after creating, rotating, test-sending and delivering at trace level', async () => {
    const { subscriptionId } = await subscribe('/quiet');
    issued.push((await t.api.post(`/api/v1/webhooks/${subscriptionId}/rotate-secret`, acme.key, {})).json().secret);
    await testSend(subscriptionId);
    await makeAsset(t, acme.key, { nickname: 'Quiet', assetClass: 'trailer' });
    await t.deps.delivery.dispatcher.dispatchOnce();
    // Request lines at least (their bodies are never logged; the rotation's and test send's are among them).
    expect(
      t.logs.filter((l) => String(l.url ?? (l.req as { url?: string })?.url).includes('rotate-secret')).length,
    ).toBeGreaterThan(0);
    const metrics = await t.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: 'Bearer metrics-token-for-tests' },
    });
    expect(metrics.statusCode).toBe(200);
    const feed = await t.api.get('/api/v1/events?limit=100', acme.key);
    const listing = await t.api.get('/api/v1/webhooks?limit=100', acme.key);
    const deliveries = await t.api.get(`/api/v1/webhooks/${subscriptionId}/deliveries`, acme.key);
    expect(issued.length).toBeGreaterThanOrEqual(2);
    for (const text of [JSON.stringify(t.logs), metrics.body, feed.body, listing.body, deliveries.body])
      expect(leaked(text)).toEqual([]);
  });
});

describe.skipIf(!onPostgres)('a pg_dump of the database', () => {
  it('holds none of the secrets in any form, and after a restart both live secrets still sign', async () => {
    const three = [await subscribe('/dump-1'), await subscribe('/dump-2'), await subscribe('/dump-3')];
    const rotatedId = three[0].subscriptionId;
    // Through an Idempotency-Key too: the stored response (which carries the secret) is encrypted as well.
    const rotated = (
      await t.api.post(
        `/api/v1/webhooks/${rotatedId}/rotate-secret`,
        acme.key,
        { overlapSeconds: 3600 },
        {
          'idempotency-key': `dump-${randomBytes(8).toString('hex')}`,
        },
      )
    ).json();
    issued.push(rotated.secret);
    const live = [three[0].secret, three[1].secret, three[2].secret, rotated.secret];

    const dump = execFileSync('pg_dump', ['--data-only', '--no-owner', t.db.url!], { maxBuffer: 256 * 1024 * 1024 });
    const text = dump.toString('latin1');
    expect(text).toContain(rotatedId); // the dump does hold the subscriptions
    expect(leaked(text, live)).toEqual([]);
    expect(leaked(text)).toEqual([]);

    // A restart: new dependencies over the same database, keys from the configuration only.
    const restarted: AppDeps = createDeps(t.deps.config, t.db, t.deps.logger);
    try {
      const { buildApp } = await import('../../../src/app.ts');
      const app = await buildApp(restarted);
      const res = await app.inject({
        method: 'POST',
        url: `/api/v1/webhooks/${rotatedId}/test`,
        headers: { authorization: `Bearer ${acme.key}`, 'content-type': 'application/json' },
        payload: '{}',
      });
      expect(res.json()).toMatchObject({ delivered: true });
      const req = last('/dump-1');
      expect(String(req.headers['x-service-signature']).split(' ')).toHaveLength(2);
      expect(verifies(rotated.secret, req)).toBe(true);
      expect(verifies(three[0].secret, req)).toBe(true);
      await app.close();
    } finally {
      await restarted.close();
    }
  });
});
