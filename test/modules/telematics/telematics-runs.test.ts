import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../helpers/app/test-app.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { makeAsset } from '../../helpers/app/factories.ts';
import {
  bearerIssued,
  fixture,
  guarded,
  startProvider,
  tokenEndpoint,
  xml,
  type FakeProvider,
  type Handler,
} from '../../helpers/telematics/fake-provider.ts';
import { makeConnection, syncAndWait, telematicsApp } from '../../helpers/telematics/telematics-app.ts';

let t: TestApp;
let provider: FakeProvider;
let acme: TestTenant;

beforeAll(async () => {
  provider = await startProvider();
  t = await telematicsApp(provider, { TELEMATICS_MAX_PAGE_BYTES: '20000', TELEMATICS_TIMEOUT_MS: '400' });
  acme = await t.tenant('Acme');
  provider.routes.set('/oauth/token', tokenEndpoint('c', 's'));
});
afterAll(async () => {
  await t.close();
  await provider.close();
});

/** The JCMA page, its links pointing at the page asked for (a single-page feed). */
const page = (req: { path: string }) =>
  xml(fixture('jcma-fleet.xml', provider.origin).replaceAll('/Telematics/Fleet/0', req.path));
let n = 0;
/** A connection on its own path served by `handler`. */
async function feed(handler: Handler, auth: Record<string, unknown> = { type: 'none' }) {
  const path = `/feed-${++n}`;
  provider.routes.set(path, handler);
  return makeConnection(t, acme.key, { fleetUrl: `${provider.origin}${path}`, auth });
}
const calls = (path: string) => provider.requests.filter((r) => r.path.startsWith(path)).length;

describe('provider answers', () => {
  it('refreshes an OAuth2 token once on 401', async () => {
    let rejectOnce = true;
    const id = await feed(
      guarded(bearerIssued, (req) => {
        if (rejectOnce) {
          rejectOnce = false;
          provider.tokens.clear();
          return { status: 401, body: 'expired' };
        }
        return page(req);
      }),
      {
        type: 'oauth2-client-credentials',
        tokenUrl: `${provider.origin}/oauth/token`,
        clientId: 'c',
        clientSecret: 's',
      },
    );
    const before = provider.requests.length;
    expect(await syncAndWait(t, acme.key, id)).toMatchObject({ status: 'SUCCEEDED', equipmentSeen: 2 });
    // Two tokens reached the feed: the refused one and its one refresh. (Counting token requests would also count
    // a token request retried after this file's short timeout on a busy machine.)
    const pageRequests = provider.requests.slice(before).filter((r) => r.path !== '/oauth/token');
    expect(new Set(pageRequests.map((r) => r.headers.authorization)).size).toBe(2);
  });

  it('fails with the reason when credentials are refused', async () => {
    const id = await feed(() => ({ status: 401 }), { type: 'bearer', token: 'wrong' });
    const run = await syncAndWait(t, acme.key, id);
    expect(run).toMatchObject({ status: 'FAILED', error: expect.stringContaining('401') });
  });

  it('honours Retry-After within the cap, and fails clearly beyond it', async () => {
    let first = true;
    const ok = await feed((req) => {
      if (!first) return page(req);
      first = false;
      return { status: 429, headers: { 'retry-after': '1' } };
    });
    expect(await syncAndWait(t, acme.key, ok)).toMatchObject({ status: 'SUCCEEDED' });
    const tooLong = await feed(() => ({ status: 429, headers: { 'retry-after': '900' } }));
    const run = await syncAndWait(t, acme.key, tooLong);
    expect(run).toMatchObject({ status: 'FAILED', error: expect.stringContaining('Retry-After') });
  });

  it('retries 5xx with backoff, then fails with the reason', async () => {
    const path = `/feed-${n + 1}`;
    const id = await feed(() => ({ status: 503, body: 'maintenance' }));
    const run = await syncAndWait(t, acme.key, id);
    expect(run).toMatchObject({ status: 'FAILED', error: expect.stringContaining('503') });
    expect(calls(path)).toBe(4);
  });

  it('fails a provider that never answers within the timeout', async () => {
    const id = await feed(() => ({ hang: true }));
    const run = await syncAndWait(t, acme.key, id);
    expect(run).toMatchObject({ status: 'FAILED', error: expect.stringContaining('timed out') });
  });

  it.each([
    [
      'an HTML login page',
      () => ({ body: '<!DOCTYPE html><html><body>Sign in</body></html>', headers: { 'content-type': 'text/html' } }),
      /not an ISO 15143-3 document/,
    ],
    [
      'an XML entity',
      () => xml('<!DOCTYPE Fleet [<!ENTITY e SYSTEM "file:///etc/passwd">]><Fleet>&e;</Fleet>'),
      /DTD or entities/,
    ],
    ['malformed XML', () => xml('<Fleet><Equipment>'), /malformed XML/],
    ['a page over the size cap', () => xml(`<Fleet>${'<Equipment/>'.repeat(3000)}</Fleet>`), /larger than the cap/],
    [
      'a next link to another host',
      () => xml(fixture('jcma-fleet.xml', 'https://elsewhere.example.com')),
      /another host/,
    ],
  ])('fails a run on %s, writing nothing', async (_, handler, message) => {
    const before = await t.db.prisma.meterLog.count();
    const id = await feed(handler as Handler);
    const run = await syncAndWait(t, acme.key, id);
    expect(run.status).toBe('FAILED');
    expect(run.error).toMatch(message);
    if (!String(message).includes('another host')) expect(await t.db.prisma.meterLog.count()).toBe(before);
  });
});

describe('failing and recovered', () => {
  it('emits failing after 3 failed runs in a row (once), and recovered on the next success', async () => {
    let healthy = false;
    const id = await feed((req) => (healthy ? page(req) : { status: 500 }));
    const events = async (type: string) =>
      (await t.db.prisma.event.findMany({ where: { orgId: acme.orgId, type } })).filter(
        (e) => (e.data as { connectionId: string }).connectionId === id,
      );
    for (let i = 0; i < 4; i++) await syncAndWait(t, acme.key, id);
    const conn = (await t.api.get(`/api/v1/telematics/connections/${id}`, acme.key)).json().connection;
    expect(conn).toMatchObject({ status: 'FAILING', lastError: expect.stringContaining('500') });
    const failing = await events('telematics_connection.failing');
    expect(failing).toHaveLength(1);
    expect(failing[0].data).toMatchObject({ consecutiveFailures: 3 });
    healthy = true;
    await syncAndWait(t, acme.key, id);
    expect((await events('telematics_connection.recovered')).map((e) => e.data)).toEqual([
      expect.objectContaining({ connectionId: id, failedRuns: 4 }),
    ]);
    expect((await t.api.get(`/api/v1/telematics/connections/${id}`, acme.key)).json().connection.status).toBe('OK');
  });
});

describe('one run at a time', () => {
  it('answers the running run to a second sync, and takes over a crashed run once its lease lapses', async () => {
    await makeAsset(t, acme.key, { serial: '190502580' });
    let release: () => void = () => {};
    const held = new Promise<void>((r) => (release = r));
    let waiting = true;
    const path = `/feed-${n + 1}`;
    const id = await feed((req) => (waiting ? { hang: true } : page(req)));
    const first = (await t.api.post(`/api/v1/telematics/connections/${id}/sync`, acme.key)).json().runId;
    const second = (await t.api.post(`/api/v1/telematics/connections/${id}/sync`, acme.key)).json().runId;
    expect(second).toBe(first);
    waiting = false;
    release();
    await held;
    await t.deps.background.idle();
    expect(calls(path)).toBeGreaterThan(0);
    // A crash: a run left RUNNING under a lease that has lapsed.
    await t.db.sql.query(
      `UPDATE telematics_connections SET "leaseOwner" = 'dead-instance', "leaseUntil" = now() - interval '1 second' WHERE id = $1`,
      [id],
    );
    const orphan = await t.db.prisma.telematicsRun.create({
      data: { orgId: acme.orgId, connectionId: id, status: 'RUNNING', trigger: 'scheduled' },
    });
    const run = await syncAndWait(t, acme.key, id);
    expect(run.runId).not.toBe(orphan.id);
    expect(run.status).toBe('SUCCEEDED');
    const old = await t.db.prisma.telematicsRun.findUniqueOrThrow({ where: { id: orphan.id } });
    expect(old).toMatchObject({ status: 'FAILED', error: expect.stringContaining('stopped') });
  });

  it('the scheduler runs due connections and spaces the next run by pollMinutes', async () => {
    const id = await feed((req) => page(req));
    await t.db.sql.query(`UPDATE telematics_connections SET enabled = false WHERE id <> $1`, [id]);
    expect(await t.deps.services.telematics.tick()).toBe(1);
    await t.deps.background.idle();
    const conn = (await t.api.get(`/api/v1/telematics/connections/${id}`, acme.key)).json().connection;
    expect(conn.status).toBe('OK');
    expect(new Date(conn.nextRunAt).getTime() - new Date(conn.lastRunAt).getTime()).toBe(15 * 60_000);
    expect(await t.deps.services.telematics.tick()).toBe(0);
  });
});
