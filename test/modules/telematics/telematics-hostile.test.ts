import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { retryAfterSeconds } from '../../../src/modules/telematics/telematics-feed.adapter.ts';
import { parseFeedPage } from '../../../src/modules/telematics/telematics-parse.adapter.ts';
import type { TestApp } from '../../helpers/app/test-app.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { makeAsset } from '../../helpers/app/factories.ts';
import { json, startProvider, xml, type FakeProvider, type Handler } from '../../helpers/telematics/fake-provider.ts';
import { makeConnection, syncAndWait, telematicsApp } from '../../helpers/telematics/telematics-app.ts';

/**
 * Feeds that misbehave on purpose: paging that never ends or goes round in circles, waits asked as dates,
 * token endpoints that answer a login page, values and structures built to break a parser. Each ends the run
 * with a clear error or a counted machine error; none runs forever, crashes or stores garbage.
 */
const METRICS_TOKEN = 'telematics-metrics-0123456789';
let t: TestApp;
let provider: FakeProvider;
let acme: TestTenant;

beforeAll(async () => {
  provider = await startProvider();
  t = await telematicsApp(provider, { TELEMATICS_MAX_PAGES: '5', METRICS_TOKEN });
  acme = await t.tenant('Hostile');
});
afterAll(async () => {
  await t.close();
  await provider.close();
});

/** One machine per page; `next` (relative or absolute) when given. */
const fleetPage = (pin: string, hours: string, next?: string) =>
  xml(`<?xml version="1.0"?><Fleet xmlns="http://standards.iso.org/iso/15143/-3" snapshotTime="2026-11-19T10:00:00Z">
  ${next ? `<Links><rel>next</rel><href>${next}</href></Links>` : ''}
  <Equipment><EquipmentHeader><OEMName>CAT</OEMName><Model>320</Model><PIN>${pin}</PIN></EquipmentHeader>
    <CumulativeOperatingHours datetime="2026-11-19T09:00:00Z"><Hour>${hours}</Hour></CumulativeOperatingHours>
  </Equipment></Fleet>`);

let n = 0;
/** A fresh path prefix: its pages are `${prefix}/<anything>`, served by `handler` with the page name. */
async function feed(handler: (page: string) => ReturnType<Handler>, auth: Record<string, unknown> = { type: 'none' }) {
  const prefix = `/hostile-${++n}`;
  const pages = new Map<string, Handler>();
  for (const name of ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']) pages.set(name, () => handler(name));
  for (const [name, h] of pages) provider.routes.set(`${prefix}/${name}`, h);
  const id = await makeConnection(t, acme.key, { fleetUrl: `${provider.origin}${prefix}/a`, auth });
  return { id, prefix };
}
const requestsTo = (prefix: string) =>
  provider.requests.filter((r) => r.path.startsWith(`${prefix}/`)).map((r) => r.path);

describe('paging a hostile feed', () => {
  it('stops when next goes back to a page already read (a loop between two pages)', async () => {
    const { id, prefix } = await feed((page) =>
      page === 'a' ? fleetPage('LOOP-A', '10', 'b') : fleetPage('LOOP-B', '10', `${provider.origin}${prefix}/a`),
    );
    const run = await syncAndWait(t, acme.key, id);
    expect(run).toMatchObject({ status: 'SUCCEEDED', pages: 2, equipmentSeen: 2 });
    expect(requestsTo(prefix)).toEqual([`${prefix}/a`, `${prefix}/b`]);
  });

  it('ends a feed whose pages never end at TELEMATICS_MAX_PAGES, keeping the pages read', async () => {
    const order = 'abcdefgh';
    const { id, prefix } = await feed((page) => fleetPage(`MANY-${page}`, '10', order[order.indexOf(page) + 1]));
    const run = await syncAndWait(t, acme.key, id);
    expect(run).toMatchObject({ status: 'FAILED', pages: 5, equipmentSeen: 5 });
    expect(run.error).toContain('TELEMATICS_MAX_PAGES');
    expect(requestsTo(prefix)).toHaveLength(5);
    const machines = (await t.api.get(`/api/v1/telematics/connections/${id}/equipment`, acme.key)).json().equipment;
    expect(machines).toHaveLength(5);
  });

  it('refuses a next link that carries credentials', async () => {
    const { id } = await feed((page) =>
      page === 'a' ? fleetPage('CRED-A', '10', `${provider.origin.replace('https://', 'https://u:p@')}/x/b`) : {},
    );
    const run = await syncAndWait(t, acme.key, id);
    expect(run).toMatchObject({ status: 'FAILED', error: expect.stringContaining('credentials') });
  });
});

describe('waits and tokens', () => {
  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-11-19T10:00:00Z');
    expect(retryAfterSeconds('120', now)).toBe(120);
    expect(retryAfterSeconds('Thu, 19 Nov 2026 10:02:00 GMT', now)).toBe(120);
    expect(retryAfterSeconds('Thu, 19 Nov 2026 09:00:00 GMT', now)).toBe(0);
    expect(retryAfterSeconds(['30', '60'], now)).toBe(30);
    expect(retryAfterSeconds('soon', now)).toBeNull();
    expect(retryAfterSeconds(undefined, now)).toBeNull();
  });

  it('waits a 429 whose Retry-After is a date already past, and fails one dated beyond the cap', async () => {
    let first = true;
    const past = await feed(() => {
      if (!first) return fleetPage('WAIT-1', '10');
      first = false;
      return { status: 429, headers: { 'retry-after': new Date(Date.now() - 60_000).toUTCString() } };
    });
    expect(await syncAndWait(t, acme.key, past.id)).toMatchObject({ status: 'SUCCEEDED', pages: 1 });
    expect(requestsTo(past.prefix)).toHaveLength(2);

    const later = await feed(() => ({
      status: 429,
      headers: { 'retry-after': new Date(Date.now() + 3_600_000).toUTCString() },
    }));
    const run = await syncAndWait(t, acme.key, later.id);
    expect(run).toMatchObject({ status: 'FAILED', error: expect.stringMatching(/429.*Retry-After/) });
    expect(requestsTo(later.prefix)).toHaveLength(1);
  });

  it.each([
    [
      'an HTML login page',
      () => ({ headers: { 'content-type': 'text/html' }, body: '<!DOCTYPE html><html><body>Sign in</body></html>' }),
      /did not answer JSON but an HTML page/,
    ],
    ['JSON without a token', () => json('{"error":"temporarily_unavailable"}'), /no access_token/],
    ['JSON that is not an object', () => json('null'), /no access_token/],
    [
      'a token no header can carry',
      () => json(JSON.stringify({ access_token: 'abc\r\nX-Injected: 1', expires_in: 60 })),
      /not a token an Authorization header can carry/,
    ],
  ])('fails a run whose token endpoint answers %s, without asking for a page', async (_, reply, message) => {
    const tokenPath = `/token-${++n}`;
    provider.routes.set(tokenPath, reply as Handler);
    const { id, prefix } = await feed(() => fleetPage('TOKEN-1', '10'), {
      type: 'oauth2-client-credentials',
      tokenUrl: `${provider.origin}${tokenPath}`,
      clientId: 'c',
      clientSecret: 'hostile-client-secret',
    });
    const run = await syncAndWait(t, acme.key, id);
    expect(run.status).toBe('FAILED');
    expect(run.error).toMatch(message);
    expect(run.error).not.toContain('hostile-client-secret');
    expect(requestsTo(prefix)).toEqual([]);
  });
});

describe('values and structures built to break a parser', () => {
  it('counts an hour value that overflows to Infinity as a machine error and stores no reading', async () => {
    await makeAsset(t, acme.key, { serial: 'HUGE-1', meterType: 'HOURS', meterUnit: 'hours' });
    const { id } = await feed(() => fleetPage('HUGE-1', '1e400'));
    const run = await syncAndWait(t, acme.key, id);
    expect(run).toMatchObject({ status: 'SUCCEEDED', matched: 1, readingsCreated: 0, machineErrors: 1 });
    expect(run.machineErrorSamples).toEqual(['HUGE-1: CumulativeOperatingHours is not a number']);
  });

  it('refuses XML nested deeper than the parser accepts with a run error, not an internal one', () => {
    const deep = `<Fleet><Equipment>${'<a>'.repeat(20_000)}x${'</a>'.repeat(20_000)}</Equipment></Fleet>`;
    expect(() => parseFeedPage(deep, 'application/xml')).toThrow(/malformed XML/);
  });

  it('reads deeply nested JSON values as absent, and caps header values', () => {
    const nested = `${'['.repeat(100_000)}"x"${']'.repeat(100_000)}`;
    const page = parseFeedPage(
      `{"Equipment":[{"EquipmentHeader":{"PIN":${nested},"SerialNumber":"${'S'.repeat(5000)}","OEMName":"CAT"}}]}`,
      'application/json',
    );
    expect(page.equipment[0].pin).toBeNull();
    expect(page.equipment[0].serialNumber).toHaveLength(300);
    expect(page.equipment[0].key).toHaveLength(300);
  });
});

describe('metrics', () => {
  it('counts runs by outcome and the readings they created and skipped', async () => {
    await makeAsset(t, acme.key, { serial: 'METRIC-1', meterType: 'HOURS', meterUnit: 'hours' });
    const { id } = await feed(() => fleetPage('METRIC-1', '250'));
    await syncAndWait(t, acme.key, id);
    await syncAndWait(t, acme.key, id);
    const text = (await t.api.get('/metrics', METRICS_TOKEN)).body;
    const value = (series: string) =>
      Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
    expect(value('telematics_runs_total{outcome="succeeded"}')).toBeGreaterThanOrEqual(2);
    expect(value('telematics_runs_total{outcome="failed"}')).toBeGreaterThanOrEqual(1);
    expect(value('telematics_readings_total{result="created"}')).toBeGreaterThanOrEqual(1);
    expect(value('telematics_readings_total{result="skipped"}')).toBeGreaterThanOrEqual(1);
  });
});
