import { createHmac, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook, WebhookVerificationError, type WebhookEvent } from '@fleet-ops/sdk';
import { signatureFor } from '../../src/delivery/signer.ts';
import { startReceiver, type ReceivedRequest, type Receiver } from '../helpers/delivery/harness.ts';
import { startSdkServer, type SdkServer } from '../helpers/sdk/sdk-server.ts';

let s: SdkServer;
let receiver: Receiver;
let secret: string;
let deliveries: ReceivedRequest[];

/** Real deliveries: the dispatcher signs and sends them over HTTPS to a loopback receiver. */
beforeAll(async () => {
  receiver = await startReceiver();
  s = await startSdkServer({ WEBHOOK_CA_FILE: receiver.caFile, WEBHOOK_RETRY_SCHEDULE: '0,0' });
  const client = s.client((await s.t.tenant()).key);
  const sub = await client.webhooks.create({
    url: `${receiver.origin}/hook`,
    events: ['asset.created', 'tool.low_stock'],
  });
  secret = sub.secret;
  await client.assets.create({ nickname: 'Signed truck', assetClass: 'on-road' });
  const { toolId } = await client.tools.create({
    name: 'Zip ties',
    isConsumable: true,
    stockLevel: 20,
    minStockLevel: 10,
  });
  await client.tools.adjustStock(toolId, { delta: -12 });
  for (let i = 0; i < 5 && receiver.requests.length < 2; i++) await s.t.deps.delivery.dispatcher.dispatchOnce();
  deliveries = receiver.requests;
});
afterAll(async () => {
  await s.close();
  await receiver.close();
});

const reasonOf = (p: Promise<unknown>) =>
  p.then(
    () => 'accepted',
    (e) => (e instanceof WebhookVerificationError ? e.reason : `unexpected ${e}`),
  );
const tsOf = (d: ReceivedRequest) => Number(d.headers['x-service-timestamp']);

describe('verifyWebhook on real deliveries', () => {
  it('accepts every delivery and returns the typed event', async () => {
    expect(deliveries.map((d) => d.json.event).sort()).toEqual(['asset.created', 'tool.low_stock']);
    for (const d of deliveries) {
      const event = await verifyWebhook(d.rawBody, d.headers, secret);
      expect(event).toEqual(d.json);
      if (event.event === 'tool.low_stock') {
        // Narrowed: these fields exist only on tool.low_stock.
        expect(event.data.previousStockLevel).toBe(20);
        expect(event.data.newStockLevel).toBe(8);
        expect(event.data.thresholdUsed).toBe(10);
      } else if (event.event === 'asset.created') {
        expect(event.data.nickname).toBe('Signed truck');
      }
    }
  });

  it('takes the body as a string or bytes and the headers as a Headers object', async () => {
    const d = deliveries[0];
    const headers = new Headers(Object.entries(d.headers).map(([k, v]) => [k, String(v)]));
    await expect(verifyWebhook(d.rawBody.toString('utf8'), headers, secret)).resolves.toMatchObject({ id: d.json.id });
    await expect(verifyWebhook(new Uint8Array(d.rawBody), d.headers, [`whsec_other`, secret])).resolves.toBeTruthy();
  });

  it('refuses a tampered body, a wrong secret, and a missing signature', async () => {
    const d = deliveries.find((x) => x.json.event === 'asset.created')!;
    const tampered = Buffer.from(d.rawBody);
    tampered[tampered.indexOf('Signed')] = 'Z'.charCodeAt(0);
    expect(await reasonOf(verifyWebhook(tampered, d.headers, secret))).toBe('bad_signature');
    const reserialised = JSON.stringify(JSON.parse(d.rawBody.toString()), null, 1);
    expect(await reasonOf(verifyWebhook(reserialised, d.headers, secret))).toBe('bad_signature');
    expect(await reasonOf(verifyWebhook(d.rawBody, d.headers, `whsec_${randomBytes(32).toString('base64')}`))).toBe(
      'bad_signature',
    );
    const stripped = Object.fromEntries(Object.entries(d.headers).filter(([k]) => !/signature/i.test(k)));
    expect(await reasonOf(verifyWebhook(d.rawBody, stripped, secret))).toBe('missing_header');
    expect(await reasonOf(verifyWebhook(d.rawBody, d.headers, ''))).toBe('invalid_secret');
  });

  it('refuses stale and future timestamps outside the tolerance, and honours toleranceSec', async () => {
    const d = deliveries[0];
    const ts = tsOf(d);
    expect(await reasonOf(verifyWebhook(d.rawBody, d.headers, secret, { now: (ts + 301) * 1000 }))).toBe(
      'timestamp_too_old',
    );
    expect(await reasonOf(verifyWebhook(d.rawBody, d.headers, secret, { now: (ts - 301) * 1000 }))).toBe(
      'timestamp_in_future',
    );
    expect(await reasonOf(verifyWebhook(d.rawBody, d.headers, secret, { now: (ts + 299) * 1000 }))).toBe('accepted');
    expect(
      await reasonOf(verifyWebhook(d.rawBody, d.headers, secret, { now: (ts + 60) * 1000, toleranceSec: 30 })),
    ).toBe('timestamp_too_old');
  });
});

describe('the seed headers during a secret rotation', () => {
  it('accepts a space-separated list of v1= signatures with either secret', async () => {
    const oldSecret = `whsec_${randomBytes(32).toString('base64url')}`;
    const newSecret = `whsec_${randomBytes(32).toString('base64')}`;
    const ts = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({ id: 'd1', event: 'asset.created', organizationId: 'o', sentAt: '', data: {} });
    const headers = {
      'X-Service-Timestamp': String(ts),
      'X-Service-Signature': `${signatureFor(newSecret, ts, body)} ${signatureFor(oldSecret, ts, body)}`,
    };
    for (const key of [oldSecret, newSecret])
      expect(await reasonOf(verifyWebhook(body, headers, key))).toBe('accepted');
    expect(await reasonOf(verifyWebhook(body, headers, `whsec_${randomBytes(32).toString('base64')}`))).toBe(
      'bad_signature',
    );
    expect(await reasonOf(verifyWebhook(body, { ...headers, 'X-Service-Signature': 'sha1=abc' }, newSecret))).toBe(
      'malformed_header',
    );
    expect(await reasonOf(verifyWebhook(body, { ...headers, 'X-Service-Timestamp': 'yesterday' }, newSecret))).toBe(
      'malformed_header',
    );
  });
});

/** Signs as the Standard Webhooks specification says (https://www.standardwebhooks.com/), independently of the SDK. */
function standardSign(secrets: string[], id: string, ts: number, body: string) {
  const sigs = secrets.map((secret) => {
    const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
    return `v1,${createHmac('sha256', key).update(`${id}.${ts}.${body}`).digest('base64')}`;
  });
  return { 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': sigs.join(' ') };
}

describe('Standard Webhooks headers', () => {
  const body = JSON.stringify({
    id: 'msg_1',
    event: 'tool.low_stock',
    organizationId: 'org',
    sentAt: new Date().toISOString(),
    data: { toolId: 't', name: 'Zip ties', previousStockLevel: 6, newStockLevel: 4 },
  });
  const fresh = `whsec_${randomBytes(32).toString('base64')}`;
  const old = `whsec_${randomBytes(32).toString('base64')}`;
  const now = Math.floor(Date.now() / 1000);

  it('verifies webhook-signature, with several signatures during a rotation', async () => {
    const headers = standardSign([fresh, old], 'msg_1', now, body);
    const event: WebhookEvent = await verifyWebhook(body, headers, old);
    expect(event.event).toBe('tool.low_stock');
    expect(await reasonOf(verifyWebhook(body, headers, fresh))).toBe('accepted');
    // A secret from before base64 became the rule (base64url) decodes the same way.
    const legacy = `whsec_${randomBytes(32).toString('base64url')}`;
    expect(await reasonOf(verifyWebhook(body, standardSign([legacy], 'msg_1', now, body), legacy))).toBe('accepted');
  });

  it('refuses a tampered body or id, a stale timestamp and a missing webhook-id', async () => {
    const headers = standardSign([fresh], 'msg_1', now, body);
    expect(await reasonOf(verifyWebhook(body.replace('Zip', 'Zap'), headers, fresh))).toBe('bad_signature');
    expect(await reasonOf(verifyWebhook(body, { ...headers, 'webhook-id': 'msg_2' }, fresh))).toBe('bad_signature');
    const stale = standardSign([fresh], 'msg_1', now - 301, body);
    expect(await reasonOf(verifyWebhook(body, stale, fresh))).toBe('timestamp_too_old');
    const { 'webhook-id': _, ...noId } = headers;
    expect(await reasonOf(verifyWebhook(body, noId, fresh))).toBe('missing_header');
    expect(await reasonOf(verifyWebhook(body, { ...headers, 'webhook-signature': 'v2,abc' }, fresh))).toBe(
      'malformed_header',
    );
  });

  it('falls back to the seed headers when both are present and only those verify', async () => {
    const ts = now;
    const seedSecret = fresh;
    const headers = {
      ...standardSign([`whsec_${randomBytes(32).toString('base64')}`], 'msg_1', ts, body),
      'x-service-timestamp': String(ts),
      'x-service-signature': signatureFor(seedSecret, ts, body),
    };
    expect(await reasonOf(verifyWebhook(body, headers, seedSecret))).toBe('accepted');
  });

  it('refuses a signed body that is not a webhook envelope', async () => {
    const notJson = 'hello';
    expect(await reasonOf(verifyWebhook(notJson, standardSign([fresh], 'm', now, notJson), fresh))).toBe(
      'malformed_body',
    );
  });
});
