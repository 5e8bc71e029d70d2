// A telematics provider on loopback over HTTPS, as the makers serve ISO 15143-3: an OAuth2 token endpoint, Fleet
// pages behind Basic, bearer or OAuth2, and the misbehaviours real portals show (429 with Retry-After, 500s, an
// HTML login page, an answer that never comes). Every request is recorded.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { testCertificate } from '../net/test-certificate.ts';

export interface ProviderRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface ProviderReply {
  status?: number;
  body?: string | Buffer;
  headers?: Record<string, string>;
  /** Never answers (the client's timeout must end the wait). */
  hang?: boolean;
}

export type Handler = (req: ProviderRequest, provider: FakeProvider) => ProviderReply;

export interface FakeProvider {
  /** https://localhost:<port> */
  origin: string;
  caFile: string;
  requests: ProviderRequest[];
  /** path (without the query) -> handler; unknown paths answer 404. */
  routes: Map<string, Handler>;
  /** Tokens the token endpoint issued and still accepts. */
  tokens: Set<string>;
  close(): Promise<void>;
}

export async function startProvider(): Promise<FakeProvider> {
  const { cert, key, caFile } = await testCertificate();
  const provider = { requests: [], routes: new Map(), tokens: new Set() } as unknown as FakeProvider;
  const server = https.createServer({ cert, key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request: ProviderRequest = {
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      provider.requests.push(request);
      const handler = provider.routes.get(request.path.split('?')[0]);
      const reply = handler ? handler(request, provider) : { status: 404, body: 'not found' };
      if (reply.hang) return;
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/xml; charset=utf-8', ...reply.headers });
      res.end(reply.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(provider, {
    origin: `https://localhost:${port}`,
    caFile,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

/** A fixture of test/fixtures/telematics with {{BASE}} replaced by the provider's origin. */
export function fixture(name: string, base: string): string {
  const file = new URL(`../../fixtures/telematics/${name}`, import.meta.url);
  return readFileSync(file, 'utf8').replaceAll('{{BASE}}', base);
}

/** The OAuth2 client-credentials endpoint: issues a token for the right client (form or Basic), 401 otherwise. */
export function tokenEndpoint(clientId: string, clientSecret: string, expiresIn = 3600): Handler {
  return (req, provider) => {
    const form = new URLSearchParams(req.body);
    const basic = req.headers.authorization?.startsWith('Basic ')
      ? Buffer.from(req.headers.authorization.slice(6), 'base64').toString('utf8')
      : '';
    const ok =
      form.get('grant_type') === 'client_credentials' &&
      ((form.get('client_id') === clientId && form.get('client_secret') === clientSecret) ||
        basic === `${clientId}:${clientSecret}`);
    if (!ok)
      return { status: 401, headers: { 'content-type': 'application/json' }, body: '{"error":"invalid_client"}' };
    const token = randomBytes(12).toString('hex');
    provider.tokens.add(token);
    return {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: expiresIn }),
    };
  };
}

/** A page behind a check of the Authorization header: `accept` decides, 401 otherwise. */
export function guarded(
  accept: (authorization: string | undefined, p: FakeProvider) => boolean,
  reply: Handler,
): Handler {
  return (req, p) => (accept(req.headers.authorization, p) ? reply(req, p) : { status: 401, body: 'unauthorized' });
}

export const bearerIssued = (authorization: string | undefined, p: FakeProvider) =>
  !!authorization?.startsWith('Bearer ') && p.tokens.has(authorization.slice(7));

export const basicAuth = (user: string, password: string) => (authorization: string | undefined) =>
  authorization === `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

export const xml = (body: string): ProviderReply => ({ body, headers: { 'content-type': 'application/xml' } });
export const json = (body: string): ProviderReply => ({ body, headers: { 'content-type': 'application/json' } });
