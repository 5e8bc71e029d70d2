import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../../src/events/catalog.ts';
import { emit } from '../../../src/events/outbox.ts';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { makeAsset, makeWebhook } from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { securitySuite } from '../../helpers/app/security-suite.ts';
import { loadPublishedVerifier, startReceiver, type Receiver } from '../../helpers/delivery/harness.ts';

let t: TestApp;
let acme: TestTenant;
let other: TestTenant;
let receiver: Receiver;
let foreignId: string;

beforeAll(async () => {
  receiver = await startReceiver();
  t = await createTestApp({ WEBHOOK_CA_FILE: receiver.caFile, WEBHOOK_RETRY_SCHEDULE: '0,0' });
  acme = await t.tenant('Acme');
  other = await t.tenant('Other');
  foreignId = (await makeWebhook(t, other.key, { url: `${receiver.origin}/theirs`, events: ['asset.created'] }))
    .subscriptionId;
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

const create = (body: unknown, key = acme.key) => t.api.post('/api/v1/webhooks', key, body);
const subscribe = async (events: string[] = ['asset.created'], path = '/hook') =>
  makeWebhook(t, acme.key, { url: `${receiver.origin}${path}`, events });

describe('POST /webhooks', () => {
  it('creates a subscription, returns the secret once with a warning, and drops unknown event names', async () => {
    const res = await create({
      url: `${receiver.origin}/a`,
      events: ['tool.created', 'nope.nothing', 'asset.created', 'asset.created'],
      description: ' Ops  ',
    });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({
      ok: true,
      events: ['asset.created', 'tool.created'],
      url: `${receiver.origin}/a`,
      description: 'Ops',
      active: true,
    });
    // Standard Webhooks format: standard base64 with padding of 32 random bytes.
    expect(body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(body.secret.slice(6), 'base64')).toHaveLength(32);
    expect(body.secretWarning).toMatch(/only/i);
    expect(new Date(body.createdAt).toISOString()).toBe(body.createdAt);
    const stored = await t.db.prisma.webhookSubscription.findUniqueOrThrow({ where: { id: body.subscriptionId } });
    // Stored sealed (webhook-secrets-at-rest.test.ts has the details), never in plaintext.
    expect(stored).toMatchObject({ orgId: acme.orgId, secret: null, events: ['asset.created', 'tool.created'] });
    expect(t.deps.secretBox.openSecret(stored.id, 'current', stored.secretCiphertext!)).toBe(body.secret);
  });

  it('gives every subscription its own secret', async () => {
    const a = await subscribe();
    const b = await subscribe();
    expect(a.secret).not.toBe(b.secret);
  });

  it.each([
    [{ events: ['asset.created'] }, 'url', 'is required'],
    [{ url: 'not a url', events: ['asset.created'] }, 'url', 'must be an absolute https:// URL'],
    [{ url: 'http://example.com/hook', events: ['asset.created'] }, 'url', 'must use https://'],
    [{ url: 'https://user:pw@example.com/hook', events: ['asset.created'] }, 'url', 'must not contain credentials'],
    [{ url: 'https://example.com/hook' }, 'events', 'is required'],
    [{ url: 'https://example.com/hook', events: 'asset.created' }, 'events', 'must be an array of event type names'],
  ])('answers 422 for %j', async (body, field, message) => {
    const before = await t.db.prisma.webhookSubscription.count();
    const res = await create(body);
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ ok: false, error: 'validation_failed' });
    expect(res.json().fieldErrors[field]).toBe(message);
    expect(await t.db.prisma.webhookSubscription.count()).toBe(before);
  });

  it('drops unknown event names silently, even when none is left (spec)', async () => {
    const res = await create({ url: 'https://example.com/hook', events: ['nope', 'flag.exploded'] });
    expect(res.statusCode).toBe(201);
    expect(res.json().events).toEqual([]);
  });
});

describe('URLs that are not public', () => {
  it('answers one message whether the host resolves to a non-public address or does not resolve', async () => {
    const strict = await createTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false', LOG_LEVEL: 'debug' });
    try {
      const tenant = await strict.tenant();
      const answers = [];
      for (const url of ['https://localhost/hook', 'https://no-such-host.invalid/hook', 'https://10.0.0.7/hook']) {
        const res = await strict.api.post('/api/v1/webhooks', tenant.key, { url, events: ['asset.created'] });
        expect(res.statusCode).toBe(422);
        answers.push(res.json());
      }
      expect(answers[0]).toEqual({
        ok: false,
        error: 'validation_failed',
        message: expect.any(String),
        fieldErrors: { url: 'must name a host that resolves to public addresses only' },
      });
      expect(answers[1]).toEqual(answers[0]);
      expect(answers[2]).toEqual(answers[0]);
      // The difference is kept for the operator, in the server's debug log only.
      const why = strict.logs.filter((l) => l.msg === 'webhook URL refused').map((l) => l.why);
      expect(why).toEqual([
        'localhost resolves to a non-public address',
        'no-such-host.invalid does not resolve',
        '10.0.0.7 is not a public address',
      ]);
    } finally {
      await strict.close();
    }
  });
});

describe('GET /webhooks and /webhooks/{id}', () => {
  it('lists newest first with a cursor and never shows a secret', async () => {
    const fresh = await t.tenant('Lister');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push(
        (await makeWebhook(t, fresh.key, { url: `${receiver.origin}/l${i}`, events: ['asset.created'] }))
          .subscriptionId,
      );
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await t.api.get(`/api/v1/webhooks?limit=2${cursor ? `&cursor=${cursor}` : ''}`, fresh.key);
      expect(res.statusCode).toBe(200);
      expect(res.body).not.toContain('whsec_');
      seen.push(...res.json().webhooks.map((w: { id: string }) => w.id));
      cursor = res.json().nextCursor;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
  });

  it('shows the detail with delivery counts and without the secret', async () => {
    const { subscriptionId } = await subscribe(['asset.created']);
    await makeAsset(t, acme.key, { nickname: 'Counted', assetClass: 'trailer' });
    const res = await t.api.get(`/api/v1/webhooks/${subscriptionId}`, acme.key);
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toContain('whsec_');
    expect(res.json().webhook).toMatchObject({
      id: subscriptionId,
      events: ['asset.created'],
      active: true,
      deliveryCounts: { PENDING: 1, DELIVERED: 0, FAILED: 0, ABANDONED: 0 },
    });
  });

  it('answers 422 for a cursor it did not issue', async () => {
    const res = await t.api.get('/api/v1/webhooks?cursor=garbage', acme.key);
    expect(res.statusCode).toBe(422);
  });
});

describe('PATCH /webhooks/{id}', () => {
  it('updates url, events, description and active, keeping the secret', async () => {
    const { subscriptionId, secret } = await subscribe(['asset.created']);
    const res = await t.api.patch(`/api/v1/webhooks/${subscriptionId}`, acme.key, {
      url: `${receiver.origin}/moved`,
      events: ['flag.created', 'bogus'],
      description: 'Moved',
      active: false,
    });
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toContain('whsec_');
    expect(res.json().webhook).toMatchObject({
      url: `${receiver.origin}/moved`,
      events: ['flag.created'],
      description: 'Moved',
      active: false,
    });
    const stored = await t.db.prisma.webhookSubscription.findUniqueOrThrow({ where: { id: subscriptionId } });
    expect(t.deps.secretBox.openSecret(subscriptionId, 'current', stored.secretCiphertext!)).toBe(secret);
  });

  it('answers 422 for an empty patch or a non-https url', async () => {
    const { subscriptionId } = await subscribe();
    for (const body of [{}, { url: 'http://example.com' }]) {
      const res = await t.api.patch(`/api/v1/webhooks/${subscriptionId}`, acme.key, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
    }
  });

  it('pauses fan-out while inactive', async () => {
    const { subscriptionId } = await subscribe(['asset.created']);
    await t.api.patch(`/api/v1/webhooks/${subscriptionId}`, acme.key, { active: false });
    await makeAsset(t, acme.key, { nickname: 'Unheard', assetClass: 'trailer' });
    expect(await t.db.prisma.webhookDelivery.count({ where: { subscriptionId } })).toBe(0);
  });
});

describe('DELETE /webhooks/{id}', () => {
  it('removes the subscription and its queued deliveries, so they are never sent', async () => {
    const { subscriptionId } = await subscribe(['asset.created'], '/deleted');
    await makeAsset(t, acme.key, { nickname: 'Orphan', assetClass: 'trailer' });
    expect(await t.db.prisma.webhookDelivery.count({ where: { subscriptionId } })).toBe(1);
    const res = await t.api.delete(`/api/v1/webhooks/${subscriptionId}`, acme.key);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true, subscriptionId, deleted: true });
    expect(await t.db.prisma.webhookDelivery.count({ where: { subscriptionId } })).toBe(0);
    await t.deps.delivery.dispatcher.dispatchOnce();
    expect(receiver.requests.filter((r) => r.path === '/deleted')).toHaveLength(0);
    expect((await t.api.get(`/api/v1/webhooks/${subscriptionId}`, acme.key)).statusCode).toBe(404);
    expect((await t.api.delete(`/api/v1/webhooks/${subscriptionId}`, acme.key)).statusCode).toBe(404);
  });
});

describe('GET /webhooks/{id}/deliveries', () => {
  it('lists history newest first, filters by status CSV and pages with a cursor', async () => {
    const { subscriptionId } = await subscribe(['tool.created'], '/history');
    receiver.respond = (req) =>
      req.path === '/history' && req.json?.data?.name === 'bad' ? { status: 500, body: 'x'.repeat(800) } : {};
    await t.db.prisma.$transaction(async (tx) => {
      for (const name of ['ok1', 'bad', 'ok2']) {
        await emit(tx, acme.orgId, 'tool.created', {
          toolId: name,
          name,
          category: null,
          isConsumable: false,
          scanToken: 's',
          actorId: null,
          at: new Date().toISOString(),
        });
      }
    });
    for (let i = 0; i < 3; i++) await t.deps.delivery.dispatcher.dispatchOnce();
    receiver.respond = () => ({});
    const all = (await t.api.get(`/api/v1/webhooks/${subscriptionId}/deliveries`, acme.key)).json().deliveries;
    expect(all).toHaveLength(3);
    const abandoned = all.find((d: { status: string }) => d.status === 'ABANDONED');
    expect(abandoned).toMatchObject({
      event: 'tool.created',
      attempts: 3,
      responseStatus: 500,
      nextAttemptAt: null,
      error: 'receiver answered 500',
    });
    expect(abandoned.responseBody).toHaveLength(500);
    const delivered = all.filter((d: { status: string }) => d.status === 'DELIVERED');
    expect(delivered).toHaveLength(2);
    expect(delivered[0]).toMatchObject({
      attempts: 1,
      responseStatus: 200,
      responseBody: 'ok',
      error: null,
      nextAttemptAt: null,
    });
    const sorted = [...all].sort((a, b) =>
      a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1,
    );
    expect(all.map((d: { id: string }) => d.id)).toEqual(sorted.map((d) => d.id));

    const filtered = (
      await t.api.get(`/api/v1/webhooks/${subscriptionId}/deliveries?status=abandoned,BOGUS`, acme.key)
    ).json().deliveries;
    expect(filtered.map((d: { id: string }) => d.id)).toEqual([abandoned.id]);

    const page1 = (await t.api.get(`/api/v1/webhooks/${subscriptionId}/deliveries?limit=2`, acme.key)).json();
    const page2 = (
      await t.api.get(`/api/v1/webhooks/${subscriptionId}/deliveries?limit=2&cursor=${page1.nextCursor}`, acme.key)
    ).json();
    expect([...page1.deliveries, ...page2.deliveries].map((d: { id: string }) => d.id)).toEqual(
      all.map((d: { id: string }) => d.id),
    );
    expect(page2.nextCursor).toBeNull();
  });

  it('clamps limit to 1-200 and defaults to 50', async () => {
    const { subscriptionId } = await subscribe(['asset.updated'], '/many');
    await t.db.prisma.$transaction(async (tx) => {
      for (let i = 0; i < 205; i++) {
        await emit(tx, acme.orgId, 'asset.updated', {
          assetId: `a${i}`,
          nickname: 'n',
          changedFields: ['nickname'],
          lifecycleStatus: 'IN_SERVICE',
          actorId: null,
          updatedAt: new Date().toISOString(),
        });
      }
    });
    const count = async (q: string) =>
      (await t.api.get(`/api/v1/webhooks/${subscriptionId}/deliveries${q}`, acme.key)).json().deliveries.length;
    expect(await count('')).toBe(50);
    expect(await count('?limit=500')).toBe(200);
    expect(await count('?limit=0')).toBe(1);
    await t.api.delete(`/api/v1/webhooks/${subscriptionId}`, acme.key);
  });
});

describe('POST /webhooks/{id}/test', () => {
  it('sends a signed synthetic flag.created with X-Service-Test: 1, directly, without recording it', async () => {
    const { verifyWebhook } = await loadPublishedVerifier();
    const { subscriptionId, secret } = await subscribe(['asset.created'], '/test-me');
    receiver.respond = (req) => (req.path === '/test-me' ? { status: 202, body: `héllo ${'é'.repeat(600)}` } : {});
    const before = receiver.requests.length;
    const res = await t.api.post(`/api/v1/webhooks/${subscriptionId}/test`, acme.key);
    receiver.respond = () => ({});
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ ok: true, delivered: true, responseStatus: 202, networkError: null });
    expect(Buffer.byteLength(body.responseBody)).toBeLessThanOrEqual(500);
    expect(Buffer.byteLength(body.responseBody)).toBeGreaterThanOrEqual(499);
    expect(body.responseBody.startsWith('héllo é')).toBe(true);
    const sent = receiver.requests.slice(before);
    expect(sent).toHaveLength(1);
    const req = sent[0];
    expect(req.headers['x-service-test']).toBe('1');
    expect(req.headers['x-service-event']).toBe('flag.created');
    expect(req.headers['x-service-signature']).toBe(body.signaturePreview);
    expect(body.signaturePreview).toMatch(/^v1=[0-9a-f]{64}$/);
    expect(verifyWebhook(req.rawBody, req.headers, secret)).toBe(true);
    expect(req.json).toMatchObject({
      event: 'flag.created',
      organizationId: acme.orgId,
      sentAt: body.sentAt,
      data: { severity: 'RED', raisedBy: { userId: acme.userId } },
    });
    expect(req.json.id).toMatch(/^test_/);
    expect(await t.db.prisma.webhookDelivery.count({ where: { subscriptionId } })).toBe(0);
    expect(await t.db.prisma.event.count({ where: { orgId: acme.orgId, type: 'flag.created' } })).toBe(0);
  });

  it('reports a non-2xx answer and a network error', async () => {
    const { subscriptionId } = await subscribe(['asset.created'], '/refuse');
    receiver.respond = (req) => (req.path === '/refuse' ? { status: 503, body: 'down' } : {});
    const refused = (await t.api.post(`/api/v1/webhooks/${subscriptionId}/test`, acme.key)).json();
    receiver.respond = () => ({});
    expect(refused).toMatchObject({ delivered: false, responseStatus: 503, responseBody: 'down', networkError: null });

    await t.db.prisma.webhookSubscription.update({
      where: { id: subscriptionId },
      data: { url: 'https://localhost:1/closed' },
    });
    const dead = (await t.api.post(`/api/v1/webhooks/${subscriptionId}/test`, acme.key)).json();
    expect(dead).toMatchObject({ delivered: false, responseStatus: null, responseBody: null });
    expect(dead.networkError).toMatch(/ECONNREFUSED/);
  });

  it('does not follow redirects', async () => {
    const { subscriptionId } = await subscribe(['asset.created'], '/redirect');
    receiver.respond = (req) =>
      req.path === '/redirect' ? { status: 307, headers: { location: `${receiver.origin}/target` } } : {};
    const res = (await t.api.post(`/api/v1/webhooks/${subscriptionId}/test`, acme.key)).json();
    receiver.respond = () => ({});
    expect(res).toMatchObject({ delivered: false, responseStatus: 307 });
    expect(receiver.requests.filter((r) => r.path === '/target')).toHaveLength(0);
  });
});

describe('event catalog', () => {
  it("accepts every one of the 37 event types (the spec's 16, the people-and-keys audit events, the service reminders', attachment.created, the inspections', the telematics connections', part.low_stock, the purchase orders', the fuel entries', expense.created and the imports')", async () => {
    expect(EVENT_TYPES).toHaveLength(37);
    const res = await create({ url: `${receiver.origin}/all`, events: EVENT_TYPES });
    expect(res.json().events).toEqual(EVENT_TYPES);
  });
});

securitySuite('webhooks', () => ({ t, tenant: acme }), [
  { label: 'GET /webhooks', method: 'GET', path: () => '/api/v1/webhooks', scope: 'events:read' },
  {
    label: 'POST /webhooks',
    method: 'POST',
    path: () => '/api/v1/webhooks',
    scope: 'events:write',
    body: { url: 'https://example.com/h', events: ['asset.created'] },
  },
  {
    label: 'GET /webhooks/:id',
    method: 'GET',
    path: () => `/api/v1/webhooks/${foreignId}`,
    scope: 'events:read',
    crossTenant: true,
  },
  {
    label: 'PATCH /webhooks/:id',
    method: 'PATCH',
    path: () => `/api/v1/webhooks/${foreignId}`,
    scope: 'events:write',
    body: { active: false },
    crossTenant: true,
  },
  {
    label: 'DELETE /webhooks/:id',
    method: 'DELETE',
    path: () => `/api/v1/webhooks/${foreignId}`,
    scope: 'events:write',
    crossTenant: true,
  },
  {
    label: 'GET /webhooks/:id/deliveries',
    method: 'GET',
    path: () => `/api/v1/webhooks/${foreignId}/deliveries`,
    scope: 'events:read',
    crossTenant: true,
  },
  {
    label: 'POST /webhooks/:id/test',
    method: 'POST',
    path: () => `/api/v1/webhooks/${foreignId}/test`,
    scope: 'events:write',
    crossTenant: true,
  },
]);
