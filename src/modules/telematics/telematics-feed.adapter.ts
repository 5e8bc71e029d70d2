// Outbound HTTP to telematics providers: the webhook rules (https only, non-public addresses refused at connect
// time unless WEBHOOK_ALLOW_PRIVATE_NETWORKS, no redirects), every exchange bounded by a timeout and every body
// by a byte cap; OAuth2 tokens cached per connection; 401 refreshes once, 429 honours Retry-After, 5xx and
// timeouts retry with backoff.
import { createHash } from 'node:crypto';
import net from 'node:net';
import type { Agent } from 'undici';
import { lazyModule } from '../../core/lazy-module.ts';
import { trustedCaContext } from '../../security/trusted-ca.ts';
import { guardedLookup, hostOf, isPrivateAddress } from '../../security/url-guard.ts';
import type { FeedPage } from './telematics-feed.rules.ts';
import { FeedError, parseFeedPage } from './telematics-parse.adapter.ts';

export type FeedAuth =
  | { type: 'none' }
  | { type: 'basic'; username: string; password: string }
  | { type: 'bearer'; token: string }
  | {
      type: 'oauth2-client-credentials';
      tokenUrl: string;
      clientId: string;
      clientSecret: string;
      scope?: string | null;
    };

export interface FeedClientOptions {
  timeoutMs: number;
  maxPageBytes: number;
  allowPrivateNetworks: boolean;
  caFile?: string;
  retries: number;
  retryBaseMs: number;
  maxRetryAfterSec: number;
  /** Waits between tries (tests make them instant). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

const undici = lazyModule<typeof import('undici')>('undici');

const defaultSleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(new FeedError('stopped (shutting down)'));
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(new FeedError('stopped (shutting down)'));
      },
      { once: true },
    );
  });

/** Seconds of a Retry-After header (delta-seconds or an HTTP date); null when absent or unreadable. */
export function retryAfterSeconds(header: string | string[] | undefined, now = Date.now()): number | null {
  const v = Array.isArray(header) ? header[0] : header;
  if (!v) return null;
  if (/^\d+$/.test(v.trim())) return Number(v.trim());
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

interface Answer {
  status: number;
  contentType: string | null;
  retryAfter: string | string[] | undefined;
  body: string;
}

export function createFeedClient(options: FeedClientOptions) {
  const sleep = options.sleep ?? defaultSleep;
  const secureContext = options.caFile ? trustedCaContext(options.caFile) : undefined;
  let agent: Agent | undefined;
  const agentOf = () =>
    (agent ??= new (undici().Agent)({
      connect: {
        timeout: options.timeoutMs,
        ...(options.allowPrivateNetworks ? {} : { lookup: guardedLookup() }),
        ...(secureContext ? { secureContext } : {}),
      },
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    }));
  const tokens = new Map<string, { fingerprint: string; token: string; expiresAt: number }>();

  /** One exchange: status and body (capped); network failures and timeouts throw RetryableError. */
  async function exchange(
    url: string,
    init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string },
    signal?: AbortSignal,
  ): Promise<Answer> {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      throw new FeedError(`invalid URL ${url.slice(0, 200)}`);
    }
    if (target.protocol !== 'https:') throw new FeedError('only https:// providers are allowed');
    const host = hostOf(target);
    if (!options.allowPrivateNetworks && net.isIP(host) && isPrivateAddress(host))
      throw new FeedError(`${host} is not a public address`);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new DOMException('timed out', 'TimeoutError')), options.timeoutMs);
    const onAbort = () => controller.abort(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const res = await undici().request(target, {
        method: init.method,
        headers: init.headers,
        body: init.body,
        dispatcher: agentOf(),
        signal: controller.signal,
      });
      const length = Number(res.headers['content-length']);
      if (Number.isFinite(length) && length > options.maxPageBytes) {
        res.body.destroy();
        throw new FeedError(`the page is larger than the cap of ${options.maxPageBytes} bytes`);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > options.maxPageBytes)
          throw new FeedError(`the page is larger than the cap of ${options.maxPageBytes} bytes`);
        chunks.push(chunk);
      }
      const type = res.headers['content-type'];
      return {
        status: res.statusCode,
        contentType: Array.isArray(type) ? type[0] : (type ?? null),
        retryAfter: res.headers['retry-after'],
        body: Buffer.concat(chunks).toString('utf8'),
      };
    } catch (err) {
      if (err instanceof FeedError) throw err;
      if (signal?.aborted) throw new FeedError('stopped (shutting down)');
      const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
      const code = e.code ?? e.cause?.code;
      if (code === 'ERR_WEBHOOK_PRIVATE_ADDRESS') throw new FeedError(`refused: ${e.message ?? e.cause?.message}`);
      const timedOut = controller.signal.aborted || /TIMEOUT/.test(code ?? '') || e.name === 'TimeoutError';
      throw new RetryableError(timedOut ? `timed out after ${options.timeoutMs} ms` : (e.message ?? String(err)));
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * An exchange with the retry rules: 5xx and network failures/timeouts are tried again with backoff
   * (`retries` times), a 429 waits its Retry-After when within the cap. Other answers are returned.
   */
  async function withRetries(label: string, send: () => Promise<Answer>, signal?: AbortSignal): Promise<Answer> {
    let failures = 0;
    for (;;) {
      let reason: string;
      try {
        const answer = await send();
        if (answer.status === 429) {
          const wait = retryAfterSeconds(answer.retryAfter) ?? options.retryBaseMs / 1000;
          if (wait > options.maxRetryAfterSec)
            throw new FeedError(
              `${label}: the provider answered 429 and asked to wait ${wait} s (Retry-After), longer than the ${options.maxRetryAfterSec} s this service waits; the next run tries again`,
            );
          if (failures++ >= options.retries) throw new FeedError(`${label}: the provider kept answering 429`);
          await sleep(wait * 1000, signal);
          continue;
        }
        if (answer.status < 500) return answer;
        reason = `the provider answered ${answer.status}`;
      } catch (err) {
        if (!(err instanceof RetryableError)) throw err;
        reason = err.message;
      }
      if (failures >= options.retries) throw new FeedError(`${label}: ${reason} (${failures + 1} tries)`);
      await sleep(options.retryBaseMs * 2 ** failures++, signal);
    }
  }

  async function fetchToken(
    key: string,
    auth: Extract<FeedAuth, { type: 'oauth2-client-credentials' }>,
    signal?: AbortSignal,
  ) {
    const fingerprint = createHash('sha256')
      .update(`${auth.tokenUrl}\0${auth.clientId}\0${auth.clientSecret}\0${auth.scope ?? ''}`)
      .digest('hex');
    const cached = tokens.get(key);
    if (cached && cached.fingerprint === fingerprint && cached.expiresAt > Date.now()) return cached.token;
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (auth.scope) form.set('scope', auth.scope);
    // Client credentials both ways: providers differ in which one they read (HTTP Basic or the form).
    form.set('client_id', auth.clientId);
    form.set('client_secret', auth.clientSecret);
    const basic = Buffer.from(`${encodeURIComponent(auth.clientId)}:${encodeURIComponent(auth.clientSecret)}`).toString(
      'base64',
    );
    const answer = await withRetries(
      'token request',
      () =>
        exchange(
          auth.tokenUrl,
          {
            method: 'POST',
            headers: {
              'content-type': 'application/x-www-form-urlencoded',
              accept: 'application/json',
              authorization: `Basic ${basic}`,
            },
            body: form.toString(),
          },
          signal,
        ),
      signal,
    );
    if (answer.status < 200 || answer.status >= 300)
      throw new FeedError(`token request: the token endpoint answered ${answer.status}`);
    let parsed: { access_token?: unknown; expires_in?: unknown } | null;
    try {
      parsed = JSON.parse(answer.body);
    } catch {
      const html = /html/i.test(answer.contentType ?? '') || /^\s*<(!doctype\s+html|html[\s>])/i.test(answer.body);
      throw new FeedError(
        `token request: the token endpoint did not answer JSON${html ? ' but an HTML page (a login page or a wrong tokenUrl?)' : ''}`,
      );
    }
    if (typeof parsed?.access_token !== 'string' || !parsed.access_token)
      throw new FeedError('token request: the answer has no access_token');
    // Sent back in a header: anything but visible ASCII would be refused there, on every try.
    if (!/^[\x21-\x7e]{1,4096}$/.test(parsed.access_token))
      throw new FeedError('token request: the access_token is not a token an Authorization header can carry');
    const ttl = Number(parsed.expires_in);
    const lifetimeMs = (Number.isFinite(ttl) && ttl > 0 ? ttl : 3600) * 1000;
    // Renewed a little early so a token never expires between the check and the provider reading it.
    tokens.set(key, { fingerprint, token: parsed.access_token, expiresAt: Date.now() + lifetimeMs * 0.9 });
    return parsed.access_token;
  }

  async function authorization(key: string, auth: FeedAuth, signal?: AbortSignal): Promise<string | null> {
    switch (auth.type) {
      case 'none':
        return null;
      case 'basic':
        return `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
      case 'bearer':
        return `Bearer ${auth.token}`;
      default:
        return `Bearer ${await fetchToken(key, auth, signal)}`;
    }
  }

  return {
    /** One page, parsed and normalised. `key` names the connection (its token cache entry). */
    async fetchPage(key: string, auth: FeedAuth, url: string, signal?: AbortSignal): Promise<FeedPage> {
      let refreshed = false;
      for (;;) {
        const header = await authorization(key, auth, signal);
        const headers: Record<string, string> = { accept: 'application/xml, application/json;q=0.9' };
        if (header) headers.authorization = header;
        const answer = await withRetries(
          'page request',
          () => exchange(url, { method: 'GET', headers }, signal),
          signal,
        );
        if (answer.status === 401 && auth.type === 'oauth2-client-credentials' && !refreshed) {
          tokens.delete(key);
          refreshed = true;
          continue;
        }
        if (answer.status === 401 || answer.status === 403)
          throw new FeedError(
            `page request: the provider answered ${answer.status} (check the connection's credentials)`,
          );
        if (answer.status >= 300 && answer.status < 400)
          throw new FeedError(`page request: the provider answered ${answer.status} (redirects are not followed)`);
        if (answer.status !== 200) throw new FeedError(`page request: the provider answered ${answer.status}`);
        return parseFeedPage(answer.body, answer.contentType);
      }
    },
    forget(key: string) {
      tokens.delete(key);
    },
    async close() {
      await agent?.close();
    },
  };
}

export type FeedClient = ReturnType<typeof createFeedClient>;

class RetryableError extends Error {}
