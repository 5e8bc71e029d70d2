import { FleetApiError, FleetConnectionError, FleetTimeoutError } from './errors.js';
import type { ClientOptions, RequestOptions } from './options.js';
import { encodeUpload, type UploadInput } from './uploads.js';

export interface Call {
  method: string;
  /** Path with its parameters filled in, e.g. `/api/v1/assets/abc`. */
  path: string;
  query?: Record<string, unknown>;
  body?: unknown;
  /** The body is an upload (UploadInput or FormData), sent as multipart/form-data. */
  multipart?: boolean;
  /** How to read a success: parsed JSON, a Blob, or nothing. */
  response: 'json' | 'binary' | 'none';
}

const UNSAFE = new Set(['POST', 'PATCH']);
/** Statuses worth another attempt: the server was overloaded or failed before or while answering. */
const RETRYABLE_5XX = new Set([500, 502, 503, 504]);

/**
 * Sends calls with the client's key, per-attempt timeouts and bounded, jittered retries. A retry is sent only
 * when it cannot apply a write twice: reads and deletes always; POST and PATCH when they carry an
 * Idempotency-Key (the server replays the first answer) or when the server refused them unseen (429).
 */
export class Transport {
  private readonly base: string;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly options: ClientOptions) {
    if (!options.apiKey) throw new TypeError('FleetClient needs an apiKey');
    this.base = (options.baseUrl ?? 'http://localhost:3000').replace(/\/+$/, '');
    const f = options.fetch ?? globalThis.fetch;
    if (!f) throw new TypeError('No fetch available: pass options.fetch');
    this.fetchImpl = (input, init) => f(input, init);
  }

  url(path: string, query?: Record<string, unknown>): string {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value === undefined || value === null) continue;
      params.set(name, Array.isArray(value) ? value.join(',') : String(value));
    }
    const qs = params.toString();
    return `${this.base}${path}${qs ? `?${qs}` : ''}`;
  }

  async send<T>(call: Call, opts: RequestOptions = {}): Promise<T> {
    const o = this.options;
    const maxRetries = Math.max(0, opts.maxRetries ?? o.maxRetries ?? 2);
    // Lower-cased names, so a caller's `Idempotency-Key` replaces ours instead of joining it.
    const headers: Record<string, string> = { accept: 'application/json' };
    for (const [name, value] of Object.entries({ ...o.headers, ...opts.headers })) headers[name.toLowerCase()] = value;
    headers.authorization = `Bearer ${o.apiKey}`;
    const upload = call.multipart ? await encodeUpload(call.body as UploadInput<Record<string, unknown>>) : null;
    // An upload's Content-Type names its boundary: the encoder's (or fetch's, for a FormData), never a caller's.
    if (upload) delete headers['content-type'];
    if (upload?.contentType) headers['content-type'] = upload.contentType;
    else if (call.body !== undefined && !upload) headers['content-type'] = 'application/json';
    const unsafe = UNSAFE.has(call.method);
    const given = opts.idempotencyKey ?? headers['idempotency-key'];
    const key =
      unsafe && given !== false
        ? (given ?? (o.idempotencyKeys === false ? undefined : newIdempotencyKey()))
        : undefined;
    delete headers['idempotency-key'];
    if (key) headers['idempotency-key'] = key;
    // An upload's body is read as it is sent: a stream cannot be sent again.
    const replayable = (!unsafe || key !== undefined) && (upload?.replayable ?? true);
    const url = this.url(call.path, call.query);
    const body = upload ? upload.body : call.body === undefined ? undefined : JSON.stringify(call.body);
    const init: RequestInit & { duplex?: 'half' } = { method: call.method, headers, body };
    if (upload?.streamed) init.duplex = 'half';

    for (let attempt = 0; ; attempt++) {
      const last = attempt >= maxRetries;
      let wait: number;
      try {
        return await this.attempt<T>(call, url, init, opts);
      } catch (err) {
        if (opts.signal?.aborted || last) throw err;
        if (err instanceof FleetApiError) {
          const retryAfter = err.retryAfterSec;
          const waitable = retryAfter === undefined || retryAfter <= (o.maxRetryAfterSec ?? 60);
          const refusedUnseen = err.status === 429 || err.code === 'idempotency_key_in_use';
          if (!waitable || !(refusedUnseen || (RETRYABLE_5XX.has(err.status) && replayable))) throw err;
          wait = retryAfter !== undefined ? retryAfter * 1000 + Math.random() * 250 : this.backoff(attempt);
        } else if (err instanceof FleetConnectionError && replayable) {
          wait = this.backoff(attempt);
        } else {
          throw err;
        }
      }
      await sleep(wait, opts.signal);
    }
  }

  /** Equal jitter: between half and all of base * 2^attempt, capped. */
  private backoff(attempt: number): number {
    const full = Math.min(this.options.retryMaxDelayMs ?? 8_000, (this.options.retryBaseDelayMs ?? 500) * 2 ** attempt);
    return full / 2 + (Math.random() * full) / 2;
  }

  private async attempt<T>(call: Call, url: string, init: RequestInit, opts: RequestOptions): Promise<T> {
    const timeoutMs = opts.timeoutMs ?? this.options.timeoutMs ?? 30_000;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const onAbort = () => controller.abort(opts.signal?.reason);
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      if (opts.signal?.aborted) throw opts.signal.reason;
      const res = await this.fetchImpl(url, { ...init, signal: controller.signal });
      if (!res.ok) throw new FleetApiError(res.status, await readBody(res), res.headers);
      if (call.response === 'none' || res.status === 204) return undefined as T;
      const type = res.headers.get('content-type') ?? '';
      if (/[/+]json\b/.test(type)) return (await res.json()) as T;
      // A file is a Blob whatever its type; text/* is text only where JSON was expected (format=csv).
      if (type.startsWith('text/') && call.response !== 'binary') return (await res.text()) as T;
      return (await res.blob()) as T;
    } catch (err) {
      if (err instanceof FleetApiError || opts.signal?.aborted) throw err;
      if (timedOut) throw new FleetTimeoutError(`No answer within ${timeoutMs} ms: ${init.method} ${url}`);
      throw new FleetConnectionError(`${init.method} ${url} failed: ${(err as Error)?.message ?? err}`, {
        cause: err,
      });
    } finally {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
    }
  }
}

async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A random UUID v4. `crypto.randomUUID` exists in Node and in browsers' secure contexts only. */
export function newIdempotencyKey(): string {
  const c = globalThis.crypto;
  if (typeof c.randomUUID === 'function') return c.randomUUID();
  const b = c.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
