import type { LookupAddress } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkWebhookUrl,
  guardedLookup,
  NOT_PUBLIC_HOST,
  isPrivateAddress,
  type LookupAll,
} from '../../src/security/url-guard.ts';
import { createWebhookSender } from '../../src/delivery/sender.ts';
import { createTestApp, type TestApp } from '../helpers/app/test-app.ts';
import { makeAsset } from '../helpers/app/factories.ts';
import type { TestTenant } from '../helpers/app/tenants.ts';
import { startReceiver, type Receiver } from '../helpers/delivery/harness.ts';

const REFUSED = [
  '0.0.0.0',
  '10.0.0.1',
  '10.255.255.255',
  '100.64.0.1',
  '100.127.255.254',
  '127.0.0.1',
  '127.8.9.10',
  '169.254.169.254',
  '169.254.0.1',
  '172.16.0.1',
  '172.31.255.255',
  '192.0.0.8',
  '192.0.2.10',
  '192.168.1.1',
  '198.18.0.1',
  '198.51.100.7',
  '203.0.113.9',
  '224.0.0.251',
  '239.255.255.250',
  '240.0.0.1',
  '255.255.255.255',
  '::',
  '::1',
  '::ffff:127.0.0.1',
  '::ffff:8.8.8.8',
  '::127.0.0.1',
  '64:ff9b::a00:1',
  'fc00::1',
  'fd12:3456::1',
  'fe80::1',
  'fe80::1%eth0',
  'fec0::1',
  'ff02::1',
  '2001:db8::1',
  '2002:a00:1::1',
  '2001::1',
  '100::1',
];
const ALLOWED = [
  '8.8.8.8',
  '1.1.1.1',
  '93.184.216.34',
  '100.63.255.255',
  '100.128.0.1',
  '172.15.255.255',
  '172.32.0.1',
  '192.169.0.1',
  '2606:4700::1111',
  '2a00:1450:4001::200e',
];

describe('isPrivateAddress', () => {
  it.each(REFUSED)('refuses %s', (ip) => expect(isPrivateAddress(ip)).toBe(true));
  it.each(ALLOWED)('allows %s', (ip) => expect(isPrivateAddress(ip)).toBe(false));
  it('treats anything that is not an IP as not public', () => expect(isPrivateAddress('localhost')).toBe(true));
});

const resolver =
  (table: Record<string, string[]>): LookupAll =>
  async (host) => {
    const addresses = table[host];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

describe('checkWebhookUrl (save time)', () => {
  const lookup = resolver({
    'hooks.example.com': ['93.184.216.34'],
    'internal.example.com': ['10.1.2.3'],
    'mixed.example.com': ['93.184.216.34', '127.0.0.1'],
    'v6.example.com': ['2606:4700::1111'],
    'v6-local.example.com': ['fd00::5'],
  });
  const check = (url: string) => checkWebhookUrl(url, { allowPrivateNetworks: false, lookup });

  it('accepts public hosts and public IP literals', async () => {
    expect(await check('https://hooks.example.com/in')).toBeNull();
    expect(await check('https://v6.example.com/in')).toBeNull();
    expect(await check('https://93.184.216.34/in')).toBeNull();
    expect(await check('https://[2606:4700::1111]:8443/in')).toBeNull();
  });

  it.each([
    ['https://internal.example.com/in', 'internal.example.com resolves to a non-public address'],
    ['https://mixed.example.com/in', 'mixed.example.com resolves to a non-public address'],
    ['https://v6-local.example.com/in', 'v6-local.example.com resolves to a non-public address'],
    ['https://169.254.169.254/latest/meta-data', '169.254.169.254 is not a public address'],
    ['https://0x7f.1/in', '127.0.0.1 is not a public address'],
    ['https://2130706433/in', '127.0.0.1 is not a public address'],
    ['https://[::1]/in', '::1 is not a public address'],
    ['https://[::ffff:127.0.0.1]/in', '::ffff:7f00:1 is not a public address'],
    ['https://nowhere.example.com/in', 'nowhere.example.com does not resolve'],
  ])('refuses %s with the one message; why only to the debug log', async (url, why) => {
    const told: string[] = [];
    expect(await checkWebhookUrl(url, { allowPrivateNetworks: false, lookup, debug: (w) => told.push(w) })).toBe(
      NOT_PUBLIC_HOST,
    );
    expect(told).toEqual([why]);
  });

  it('refuses plain http', async () => {
    expect(await check('http://hooks.example.com/in')).toBe('must use https://');
  });

  it('answers the same for a name that resolves to 127.0.0.1 (localhost, system resolver) and one that does not exist', async () => {
    const local = await checkWebhookUrl('https://localhost:8443/in', { allowPrivateNetworks: false });
    const missing = await checkWebhookUrl('https://no-such-host.invalid/in', { allowPrivateNetworks: false });
    expect(local).toBe('must name a host that resolves to public addresses only');
    expect(missing).toBe(local);
  });

  it('lets a possibly temporary DNS failure through (the connect-time guard still applies)', async () => {
    const flaky: LookupAll = async () => {
      throw Object.assign(new Error('getaddrinfo EAI_AGAIN'), { code: 'EAI_AGAIN' });
    };
    expect(
      await checkWebhookUrl('https://hooks.example.com/in', { allowPrivateNetworks: false, lookup: flaky }),
    ).toBeNull();
  });

  it('skips address checks when private networks are allowed, but still requires https', async () => {
    expect(await checkWebhookUrl('https://127.0.0.1/in', { allowPrivateNetworks: true })).toBeNull();
    expect(await checkWebhookUrl('http://127.0.0.1/in', { allowPrivateNetworks: true })).toBe('must use https://');
  });
});

describe('guardedLookup (connect time)', () => {
  const call = (lookup: ReturnType<typeof guardedLookup>, host: string, all: boolean) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family?: number }>((resolve) =>
      lookup(host, { all }, (err, address, family) => resolve({ err, address, family })),
    );

  it('hands public addresses to the socket in both callback shapes', async () => {
    const lookup = guardedLookup(resolver({ 'hooks.example.com': ['93.184.216.34', '2606:4700::1111'] }));
    expect(await call(lookup, 'hooks.example.com', false)).toEqual({ err: null, address: '93.184.216.34', family: 4 });
    expect((await call(lookup, 'hooks.example.com', true)).address).toEqual([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:4700::1111', family: 6 },
    ]);
  });

  it('fails the connection when a name re-binds to a private address after the save-time check', async () => {
    let answers = 0;
    const rebinding: LookupAll = async () => [{ address: answers++ === 0 ? '93.184.216.34' : '127.0.0.1', family: 4 }];
    expect(
      await checkWebhookUrl('https://rebind.example.com/in', { allowPrivateNetworks: false, lookup: rebinding }),
    ).toBeNull();
    const { err } = await call(guardedLookup(rebinding), 'rebind.example.com', true);
    expect(err?.message).toBe('rebind.example.com resolves to a non-public address');
  });
});

describe('SSRF guard through the API and the dispatcher', () => {
  let t: TestApp;
  let acme: TestTenant;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    t = await createTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false', WEBHOOK_CA_FILE: receiver.caFile });
    acme = await t.tenant();
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  it.each([
    'https://localhost/hook',
    'https://127.0.0.1/hook',
    'https://10.0.0.5/hook',
    'https://169.254.169.254/latest',
    'https://[::1]/hook',
    'https://[fd00::1]/hook',
    'https://[::ffff:10.0.0.1]/hook',
    'https://100.64.1.1/hook',
  ])('refuses %s at save time with 422 fieldErrors.url', async (url) => {
    const res = await t.api.post('/api/v1/webhooks', acme.key, { url, events: ['asset.created'] });
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors.url).toBe(NOT_PUBLIC_HOST);
    // Never a map of the internal network: no resolved address is echoed for a hostname.
    if (url.includes('localhost')) expect(res.json().fieldErrors.url).not.toMatch(/127\.0\.0\.1|::1/);
  });

  it('refuses a private url on PATCH too', async () => {
    const created = await t.api.post('/api/v1/webhooks', acme.key, {
      url: 'https://93.184.216.34/hook',
      events: ['asset.created'],
    });
    expect(created.statusCode).toBe(201);
    const res = await t.api.patch(`/api/v1/webhooks/${created.json().subscriptionId}`, acme.key, {
      url: 'https://localhost/hook',
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors.url).toBe(NOT_PUBLIC_HOST);
  });

  it('refuses at connect time a stored URL whose host resolves to loopback; nothing reaches the receiver', async () => {
    // As if DNS had pointed the name at a public address when it was saved.
    for (const url of [`${receiver.origin}/by-name`, `https://127.0.0.1:${receiver.port}/by-ip`]) {
      await t.db.prisma.webhookSubscription.create({
        data: { orgId: acme.orgId, url, events: ['asset.created'], secret: 'whsec_x' },
      });
    }
    await makeAsset(t, acme.key, { nickname: 'Rebound', assetClass: 'trailer' });
    await t.deps.delivery.dispatcher.dispatchOnce();
    expect(receiver.requests).toHaveLength(0);
    const rows = await t.db.prisma.webhookDelivery.findMany({
      where: { orgId: acme.orgId },
      include: { subscription: true },
    });
    const byName = rows.find((r) => r.subscription.url.includes('/by-name'))!;
    const byIp = rows.find((r) => r.subscription.url.includes('/by-ip'))!;
    expect(byName).toMatchObject({ status: 'FAILED', responseStatus: null });
    expect(byName.error).toMatch(/^refused: localhost resolves to a non-public address$/);
    expect(byIp).toMatchObject({ status: 'FAILED', responseStatus: null, error: '127.0.0.1 is not a public address' });
  });

  it('the same sender reaches the receiver when private networks are allowed (the guard is what blocked it)', async () => {
    const sender = createWebhookSender({ timeoutMs: 5_000, allowPrivateNetworks: true, caFile: receiver.caFile });
    const result = await sender.send(`${receiver.origin}/allowed`, '{}', { 'content-type': 'application/json' });
    await sender.close();
    expect(result).toMatchObject({ ok: true, status: 200 });
  });

  it('does not trust the receiver certificate without WEBHOOK_CA_FILE', async () => {
    const sender = createWebhookSender({ timeoutMs: 5_000, allowPrivateNetworks: true });
    const result = await sender.send(`${receiver.origin}/untrusted`, '{}', { 'content-type': 'application/json' });
    await sender.close();
    expect(result.ok).toBe(false);
    expect(result.error).toMatch(/self.signed|certificate/i);
  });
});
