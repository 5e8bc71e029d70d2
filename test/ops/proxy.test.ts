/**
 * The load balancer of the Compose stack (src/proxy): round robin over healthy replicas, a replica that goes
 * away costs no request, X-Forwarded-For rebuilt so that the API's TRUST_PROXY sees the real client, timeouts.
 * Replicas here are small HTTP servers that echo what reached them; the last test puts the real API behind it.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadProxyConfig } from '../../src/config.ts';
import { startProxy } from '../../src/proxy/proxy.ts';
import { createTestApp } from '../helpers/app/test-app.ts';

interface Seen {
  method?: string;
  url?: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A replica: answers its readiness path with `health`, and every other request per `mode`. */
function replica(name: string) {
  const state = { health: 200, mode: 'echo' as 'echo' | 'hang' | 'shutting_down', seen: [] as Seen[] };
  const server = createServer((req, res) => {
    if (req.url === '/api/v1/health') {
      res.writeHead(state.health).end('{}');
      return;
    }
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      state.seen.push({ method: req.method, url: req.url, headers: req.headers, body });
      if (state.mode === 'hang') return;
      if (state.mode === 'shutting_down') {
        res.writeHead(503, { connection: 'close', 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ ok: false, error: 'shutting_down', message: 'bye' }));
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ name, body }));
    });
  });
  return { name, state, server };
}

const listen = (server: Server) =>
  new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
const shut = (server: Server) =>
  new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });

const logs: Record<string, unknown>[] = [];
const log = pino({ level: 'info' }, { write: (l: string) => logs.push(JSON.parse(l)) }) as unknown as FastifyBaseLogger;

let a: ReturnType<typeof replica>;
let b: ReturnType<typeof replica>;
let proxy: Awaited<ReturnType<typeof startProxy>>;

async function start(env: Record<string, string> = {}) {
  a = replica('a');
  b = replica('b');
  const ports = [await listen(a.server), await listen(b.server)];
  proxy = await startProxy(
    loadProxyConfig({
      HOST: '127.0.0.1',
      PORT: '0',
      PROXY_UPSTREAM: ports.map((p) => `127.0.0.1:${p}`).join(','),
      PROXY_HEALTH_INTERVAL_MS: '60000', // the tests call refresh() themselves
      PROXY_RESPONSE_TIMEOUT_MS: '400',
      ...env,
    }),
    log,
  );
}
const call = (path: string, init: RequestInit = {}) => fetch(`http://127.0.0.1:${proxy.port}${path}`, init);
const nameOf = async (res: Response) => ((await res.json()) as { name: string }).name;

describe('proxy in front of two replicas', () => {
  beforeEach(() => start());
  afterEach(async () => {
    await proxy.close();
    await Promise.all([shut(a.server), shut(b.server)]);
  });

  it('takes turns between healthy replicas', async () => {
    const names = [];
    for (let i = 0; i < 4; i++) names.push(await nameOf(await call('/api/v1/assets')));
    expect(names.sort()).toEqual(['a', 'a', 'b', 'b']);
  });

  it('one replica down: every request is still answered, a POST body included, without waiting for a probe', async () => {
    await shut(b.server);
    for (let i = 0; i < 4; i++) {
      const res = await call('/api/v1/assets', { method: 'POST', body: `{"n":${i}}` });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ name: 'a', body: `{"n":${i}}` });
    }
    expect(logs).toContainEqual(expect.objectContaining({ msg: 'upstream down', level: 40 }));
  });

  it('a replica whose readiness fails gets no requests after the next probe, and gets them again once it passes', async () => {
    b.state.health = 503;
    await proxy.upstreams.refresh();
    for (let i = 0; i < 3; i++) expect(await nameOf(await call('/x'))).toBe('a');
    b.state.health = 200;
    await proxy.upstreams.refresh();
    const names = new Set([await nameOf(await call('/x')), await nameOf(await call('/x'))]);
    expect(names).toEqual(new Set(['a', 'b']));
  });

  it('a replica that refuses because it is shutting down: the request goes to the other one', async () => {
    b.state.mode = 'shutting_down';
    for (let i = 0; i < 3; i++) expect(await nameOf(await call('/x', { method: 'POST', body: 'x' }))).toBe('a');
  });

  it('no healthy replica: 503 in the API error shape, with Retry-After', async () => {
    a.state.health = 503;
    b.state.health = 503;
    await proxy.upstreams.refresh();
    const res = await call('/api/v1/assets');
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(await res.json()).toMatchObject({ ok: false, error: 'service_unavailable' });
  });

  it('a replica that does not answer: 504 after PROXY_RESPONSE_TIMEOUT_MS, not a hung client', async () => {
    a.state.mode = 'hang';
    b.state.mode = 'hang';
    const res = await call('/api/v1/assets');
    expect(res.status).toBe(504);
    expect(await res.json()).toMatchObject({ ok: false, error: 'upstream_timeout' });
  });

  it('a body above its limit is refused with 413 before any replica sees it', async () => {
    const res = await call('/x', { method: 'POST', body: 'x'.repeat(2 * 1024 * 1024 + 1) });
    expect(res.status).toBe(413);
    expect(a.state.seen.length + b.state.seen.length).toBe(0);
  });

  it('X-Forwarded-For: a client cannot choose its address; request id and Host passed on', async () => {
    await call('/x', {
      headers: { 'x-forwarded-for': '6.6.6.6', 'x-forwarded-proto': 'https', 'x-request-id': 'abc-1' },
    });
    const seen = [...a.state.seen, ...b.state.seen][0];
    expect(seen.headers['x-forwarded-for']).toBe('127.0.0.1');
    expect(seen.headers['x-forwarded-proto']).toBe('http');
    expect(seen.headers['x-request-id']).toBe('abc-1');
    expect(seen.headers.host).toBe(`127.0.0.1:${proxy.port}`);
  });
});

describe('proxy behind a trusted load balancer (TRUST_PROXY=loopback)', () => {
  beforeEach(() => start({ TRUST_PROXY: 'loopback' }));
  afterEach(async () => {
    await proxy.close();
    await Promise.all([shut(a.server), shut(b.server)]);
  });

  it('keeps the trusted chain and appends the hop it saw', async () => {
    await call('/x', { headers: { 'x-forwarded-for': '6.6.6.6', 'x-forwarded-proto': 'https' } });
    const seen = [...a.state.seen, ...b.state.seen][0];
    expect(seen.headers['x-forwarded-for']).toBe('6.6.6.6, 127.0.0.1');
    expect(seen.headers['x-forwarded-proto']).toBe('https');
  });
});

describe('the real API behind the proxy (API TRUST_PROXY=loopback)', () => {
  const closers: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
  });

  it('the API sees the client address the proxy vouches for, never one the client sent', async () => {
    const api = await createTestApp({ LOG_LEVEL: 'info', TRUST_PROXY: 'loopback' });
    closers.push(() => api.close());
    await api.app.listen({ port: 0, host: '127.0.0.1' });
    const front = await startProxy(
      loadProxyConfig({
        HOST: '127.0.0.1',
        PORT: '0',
        PROXY_UPSTREAM: `127.0.0.1:${(api.app.server.address() as AddressInfo).port}`,
      }),
      log,
    );
    closers.push(() => front.close());
    const res = await fetch(`http://127.0.0.1:${front.port}/api/v1/version`, {
      headers: { 'x-forwarded-for': '6.6.6.6', 'x-request-id': 'through-proxy' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('through-proxy');
    const incoming = api.logs.find((l) => l.reqId === 'through-proxy' && l.msg === 'incoming request');
    expect((incoming?.req as { remoteAddress?: string }).remoteAddress).toBe('127.0.0.1');
  });
});
