import net from 'node:net';
import type { Agent } from 'undici';
import { lazyModule } from '../core/lazy-module.ts';
import { trustedCaContext } from '../security/trusted-ca.ts';
import { guardedLookup, hostOf, isPrivateAddress, type LookupAll } from '../security/url-guard.ts';

export interface SendResult {
  /** True only for a 2xx answer. */
  ok: boolean;
  status: number | null;
  /** The first bytes of the response body (enough for 500 characters), or null without a response. */
  bodyPrefix: Buffer | null;
  /** Why the attempt failed: network error, timeout, refused address, or a non-2xx status. */
  error: string | null;
  durationMs: number;
  /** Cut short by the caller's signal (shutdown): not an attempt, nothing to record. */
  aborted?: boolean;
}

export interface WebhookSenderOptions {
  timeoutMs: number;
  allowPrivateNetworks: boolean;
  /** PEM file of extra certificate authorities to trust for receivers (on top of the system store). */
  caFile?: string;
  /** Name resolution used by the connect-time guard (tests inject one to simulate DNS rebinding). */
  resolveAll?: LookupAll;
}

const BODY_PREFIX_BYTES = 2048;

// undici is slow to load (docs/adr/0010-lazy-start-up.md): a process loads it when it first sends (a receiver
// waits for the send, nobody waits for that process's first healthy answer).
const undici = lazyModule<typeof import('undici')>('undici');

/**
 * POSTs signed webhook bodies. Every connection goes through an Agent whose DNS lookup refuses non-public
 * addresses (unless private networks are allowed), redirects are never followed (a 3xx is a failure), and
 * the whole exchange, body included, is bounded by the timeout.
 */
export function createWebhookSender(options: WebhookSenderOptions) {
  const secureContext = options.caFile ? trustedCaContext(options.caFile) : undefined;
  let agent: Agent | undefined;
  let closed = false;
  const agentOf = () =>
    (agent ??= new (undici().Agent)({
      connect: {
        timeout: options.timeoutMs,
        ...(options.allowPrivateNetworks ? {} : { lookup: guardedLookup(options.resolveAll) }),
        ...(secureContext ? { secureContext } : {}),
      },
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      // One keep-alive pool per origin (undici's Agent): warm connections are reused across deliveries.
      keepAliveTimeout: 10_000,
      keepAliveMaxTimeout: 60_000,
    }));

  async function send(
    url: string,
    body: string,
    headers: Record<string, string>,
    abort?: AbortSignal,
  ): Promise<SendResult> {
    const started = Date.now();
    const failed = (error: string): SendResult => ({
      ok: false,
      status: null,
      bodyPrefix: null,
      error,
      durationMs: Date.now() - started,
    });
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return failed('invalid URL');
    }
    if (target.protocol !== 'https:') return failed('only https:// receivers are allowed');
    // As a closed Agent would: no new connections once the sender is closed (shutdown).
    if (closed) return failed('the webhook sender is closed (shutting down)');
    // IP literals never reach the lookup, so they are checked here.
    const host = hostOf(target);
    if (!options.allowPrivateNetworks && net.isIP(host) && isPrivateAddress(host))
      return failed(`${host} is not a public address`);
    // One controller per send for the whole-exchange timeout and the caller's abort (AbortSignal.any is slow
    // on Node 20).
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new DOMException('timed out', 'TimeoutError')), options.timeoutMs);
    const onAbort = () => controller.abort(abort!.reason);
    abort?.addEventListener('abort', onAbort, { once: true });
    try {
      const res = await undici().request(target, {
        method: 'POST',
        body,
        headers,
        dispatcher: agentOf(),
        signal: controller.signal,
      });
      const bodyPrefix = await readPrefix(res.body);
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      const redirect = res.statusCode >= 300 && res.statusCode < 400;
      return {
        ok,
        status: res.statusCode,
        bodyPrefix,
        error: ok ? null : `receiver answered ${res.statusCode}${redirect ? ' (redirects are not followed)' : ''}`,
        durationMs: Date.now() - started,
      };
    } catch (err) {
      if (abort?.aborted) return { ...failed('aborted (shutting down)'), aborted: true };
      return failed(
        describeNetworkError(controller.signal.aborted ? controller.signal.reason : err, options.timeoutMs),
      );
    } finally {
      clearTimeout(timer);
      abort?.removeEventListener('abort', onAbort);
    }
  }

  return {
    send,
    close: async () => {
      closed = true;
      await agent?.close();
    },
  };
}

export type WebhookSender = ReturnType<typeof createWebhookSender>;

async function readPrefix(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= BODY_PREFIX_BYTES) break; // leaving the loop destroys the stream: the rest is not read
  }
  return Buffer.concat(chunks).subarray(0, BODY_PREFIX_BYTES);
}

/** The first `max` characters of the body, for delivery history. */
export function firstChars(body: Buffer | null, max = 500): string | null {
  if (!body) return null;
  return Array.from(body.toString('utf8')).slice(0, max).join('');
}

/** The first `max` bytes of the body, cut back to a character boundary, for the test endpoint. */
export function firstBytes(body: Buffer | null, max = 500): string | null {
  if (!body) return null;
  let end = Math.min(max, body.length);
  while (end > 0 && end < body.length && (body[end] & 0xc0) === 0x80) end--;
  return body.subarray(0, end).toString('utf8');
}

function describeNetworkError(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.code ?? e.cause?.code;
  if (
    e.name === 'TimeoutError' ||
    e.name === 'AbortError' ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT' ||
    code === 'UND_ERR_CONNECT_TIMEOUT'
  ) {
    return `timed out after ${timeoutMs} ms`;
  }
  if (code === 'ERR_WEBHOOK_PRIVATE_ADDRESS') return `refused: ${e.message ?? e.cause?.message}`;
  const message = e.message ?? e.cause?.message ?? String(err);
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}
