import { randomUUID } from 'node:crypto';
import {
  request as upstreamRequest,
  type Agent,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import proxyAddr from '@fastify/proxy-addr';
import type { FastifyBaseLogger } from 'fastify';
import type { Backend, Upstreams } from './upstreams.ts';

export interface ForwardOptions {
  upstreams: Upstreams;
  agent: Agent;
  log: FastifyBaseLogger;
  connectTimeoutMs: number;
  responseTimeoutMs: number;
  trustProxy: boolean | string[];
}

// Bodies are held whole so that a request can go to another replica when the first one refuses the
// connection. Above the API's own 1 MiB limit, so the API's 413 answers everything up to this.
export const BODY_LIMIT_BYTES = 2 * 1024 * 1024;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
// RFC 9110 §7.6.1: connection-specific headers are not forwarded (Node sets its own framing).
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'expect', // the body is already here: no 100-continue round trip with the replica
]);
// Errors that mean the replica never received the request: safe to send it to another one.
const NOT_DELIVERED = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);

class ConnectTimeout extends Error {
  code = 'ECONNTIMEOUT';
}
class ResponseTimeout extends Error {}

function sendError(res: ServerResponse, status: number, error: string, message: string, retryAfter?: number) {
  if (res.headersSent) return void res.destroy();
  const body = JSON.stringify({ ok: false, error, message });
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    ...(retryAfter ? { 'retry-after': String(retryAfter) } : {}),
  });
  res.end(body);
}

function withoutHopByHop(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const named = new Set(
    String(headers.connection ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase()),
  );
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name) && !named.has(name)));
}

function readBody(req: IncomingMessage): Promise<Buffer | 'too_large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_LIMIT_BYTES) {
        req.removeAllListeners('data');
        req.resume();
        return resolve('too_large');
      }
      chunks.push(chunk);
    });
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
    req.once('close', () => req.complete || reject(new Error('client went away before its body was complete')));
  });
}

/**
 * The request handler of the proxy. X-Forwarded-For is rebuilt, never passed on as received: the chain
 * keeps only the hops this proxy trusts (TRUST_PROXY, as the API reads it) and ends with the address that
 * connected here, so the API behind it (TRUST_PROXY covering this proxy) sees the same client address that
 * it would see without the proxy, and a client cannot choose its rate-limit identity by sending the header.
 */
export function createForwarder(opts: ForwardOptions) {
  // While no replica is ready every request would warn: one line per second at most, with the count.
  let unavailable = { loggedAt: 0, since: 0 };
  const trust = proxyAddr.compile(
    opts.trustProxy === true ? ['0.0.0.0/0', '::/0'] : opts.trustProxy === false ? [] : opts.trustProxy,
  );

  function forwardedHeaders(req: IncomingMessage, id: string, length: number): IncomingHttpHeaders {
    const headers = withoutHopByHop(req.headers);
    const peerTrusted = trust(req.socket.remoteAddress ?? '', 0);
    const chain = proxyAddr.all(req, trust).reverse();
    headers['x-forwarded-for'] = chain.join(', ');
    const firstOf = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v)?.split(',')[0]?.trim();
    headers['x-forwarded-proto'] = (peerTrusted && firstOf(req.headers['x-forwarded-proto'])) || 'http';
    const host = (peerTrusted && firstOf(req.headers['x-forwarded-host'])) || req.headers.host;
    if (host) headers['x-forwarded-host'] = host;
    else delete headers['x-forwarded-host'];
    if (req.headers.host) headers.host = req.headers.host;
    headers['x-request-id'] = id;
    if (length > 0 || !['GET', 'HEAD', 'OPTIONS', 'DELETE'].includes(req.method ?? '')) {
      headers['content-length'] = String(length);
    } else delete headers['content-length'];
    return headers;
  }

  /** One attempt on one replica; resolves when the response is handed to the client (or fails). */
  function attempt(
    backend: Backend,
    req: IncomingMessage,
    res: ServerResponse,
    headers: IncomingHttpHeaders,
    body: Buffer,
  ) {
    return new Promise<'done' | 'retry'>((resolve, reject) => {
      let answered = false;
      const up = upstreamRequest({
        host: backend.address,
        port: backend.port,
        method: req.method,
        path: req.url,
        headers,
        agent: opts.agent,
      });
      const connectTimer = setTimeout(
        () => up.destroy(new ConnectTimeout(`no connection within ${opts.connectTimeoutMs} ms`)),
        opts.connectTimeoutMs,
      );
      up.once('socket', (socket) => {
        if (!socket.connecting) clearTimeout(connectTimer);
        else socket.once('connect', () => clearTimeout(connectTimer));
      });
      // Idle time before and during the response: the API answers 503 at its own REQUEST_TIMEOUT_MS first.
      up.setTimeout(opts.responseTimeoutMs, () =>
        up.destroy(new ResponseTimeout(`no answer within ${opts.responseTimeoutMs} ms`)),
      );
      const clientGone = () => {
        if (!res.writableFinished) up.destroy();
      };
      res.once('close', clientGone);
      up.once('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(connectTimer);
        res.off('close', clientGone);
        if (answered) return void res.destroy(err);
        const refused = NOT_DELIVERED.has(err.code ?? '') || err instanceof ConnectTimeout;
        // A kept-alive connection the replica closed just before we reused it: the request was never read.
        const staleSocket = up.reusedSocket && err.code === 'ECONNRESET';
        if (refused) opts.upstreams.markDown(backend, err.message);
        if (refused || staleSocket) return resolve('retry');
        reject(err);
      });
      up.once('response', (upRes) => {
        clearTimeout(connectTimer);
        answered = true;
        // A replica that is shutting down refuses before handling anything: the next replica can take it.
        if (upRes.statusCode === 503 && upRes.headers.connection === 'close') {
          const chunks: Buffer[] = [];
          upRes.on('data', (c: Buffer) => chunks.push(c));
          upRes.once('end', () => {
            if (/"error":"shutting_down"/.test(Buffer.concat(chunks).toString())) {
              opts.upstreams.markDown(backend, 'shutting down');
              res.off('close', clientGone);
              return resolve('retry');
            }
            res.writeHead(503, withoutHopByHop(upRes.headers));
            res.end(Buffer.concat(chunks), () => resolve('done'));
          });
          return;
        }
        res.writeHead(upRes.statusCode ?? 502, upRes.statusMessage, withoutHopByHop(upRes.headers));
        upRes.pipe(res);
        upRes.once('end', () => resolve('done'));
        upRes.once('error', (err) => res.destroy(err));
      });
      up.end(body);
    });
  }

  return async function handle(req: IncomingMessage, res: ServerResponse) {
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader('x-request-id', id);
    const log = opts.log.child({ reqId: id });
    let body: Buffer | 'too_large';
    try {
      body = await readBody(req);
    } catch {
      return void res.destroy();
    }
    if (body === 'too_large') {
      res.setHeader('connection', 'close');
      return sendError(res, 413, 'payload_too_large', 'The request body is too large');
    }
    const headers = forwardedHeaders(req, id, body.length);
    const tried = new Set<Backend>();
    for (;;) {
      const backend = opts.upstreams.next(tried);
      if (!backend) {
        unavailable.since++;
        if (Date.now() - unavailable.loggedAt >= 1_000) {
          log.warn(
            { method: req.method, url: req.url, tried: tried.size, refused: unavailable.since },
            'no healthy upstream',
          );
          unavailable = { loggedAt: Date.now(), since: 0 };
        }
        return sendError(res, 503, 'service_unavailable', 'No API replica is ready; retry shortly.', 5);
      }
      tried.add(backend);
      try {
        if ((await attempt(backend, req, res, headers, body)) === 'done') return;
        log.info({ upstream: backend.key }, 'request sent to the next upstream');
      } catch (err) {
        const timeout = err instanceof ResponseTimeout;
        log.warn(
          { upstream: backend.key, method: req.method, url: req.url, err: (err as Error).message },
          'upstream failed',
        );
        return timeout
          ? sendError(res, 504, 'upstream_timeout', 'The API did not answer in time.')
          : sendError(res, 502, 'bad_gateway', 'The API closed the connection without an answer.');
      }
    }
  };
}
