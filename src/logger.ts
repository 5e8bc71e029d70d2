import { createRequire } from 'node:module';
import pino from 'pino';
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';

/** Paths that may carry credentials anywhere in a log line; pino replaces them with [redacted]. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'headers.authorization',
  'authorization',
  '*.authorization',
  'secret',
  '*.secret',
  'key',
  '*.key',
  'apiKey',
  '*.apiKey',
  // Telematics connection credentials (request bodies, auth objects).
  'clientSecret',
  '*.clientSecret',
  '*.*.clientSecret',
  'password',
  '*.password',
  '*.*.password',
  'token',
  '*.token',
  '*.*.token',
];

// Query parameters whose value is a credential whatever the route (a key pasted into ?api_key=...).
const SECRET_PARAM = /key|token|secret|passw|signature|^sig$|auth|credential|session|bearer/i;
// An API key of this service wherever it appears in a URL, whatever the parameter is called.
const API_KEY_IN_TEXT = /flt_[A-Za-z0-9_-]{20,}/g;

/** The URL as logged: secrets in the query string replaced with [redacted], the rest kept for debugging. */
export function scrubUrl(url: unknown): unknown {
  if (typeof url !== 'string') return url;
  const q = url.indexOf('?');
  const path = (q < 0 ? url : url.slice(0, q)).replace(API_KEY_IN_TEXT, '[redacted]');
  if (q < 0) return path;
  const query = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq < 0) return pair.replace(API_KEY_IN_TEXT, '[redacted]');
      let name = pair.slice(0, eq);
      try {
        name = decodeURIComponent(name.replace(/\+/g, ' '));
      } catch {
        // keep the raw name
      }
      return SECRET_PARAM.test(name) ? `${pair.slice(0, eq)}=[redacted]` : pair.replace(API_KEY_IN_TEXT, '[redacted]');
    })
    .join('&');
  return `${path}?${query}`;
}

export function loggerOptions(level: string): FastifyServerOptions['logger'] {
  return {
    level,
    redact: {
      // Request URLs are scrubbed rather than removed: the path and harmless parameters stay useful.
      paths: [...REDACT_PATHS, 'req.url', 'url'],
      censor: (value: unknown, path: string[]) => (path[path.length - 1] === 'url' ? scrubUrl(value) : '[redacted]'),
    },
  };
}

export type LogFormat = 'auto' | 'json' | 'pretty';

/**
 * `auto` is pretty on a terminal, where a person reads the lines, and JSON everywhere else (collectors parse it):
 * docs/adr/0051-pretty-logs-on-a-terminal.md.
 */
export const resolveLogFormat = (format: LogFormat, isTTY: boolean): 'json' | 'pretty' =>
  format === 'auto' ? (isTTY ? 'pretty' : 'json') : format;

/**
 * pino-pretty as a stream in this process, written synchronously like the JSON lines (coloured where the terminal
 * supports it, not with NO_COLOR); loaded only when used, so a
 * server logging JSON never loads it (docs/adr/0010-lazy-start-up.md).
 */
function prettyStream(): pino.DestinationStream {
  const build = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
  return build({ destination: 1, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
}

/**
 * The process's logger: JSON lines on standard output, each written when it is logged (one write call per line),
 * or human lines when `format` resolves to pretty (resolveLogFormat).
 * pino's default destination buffers instead, and its buffer measures its whole pending text again on every line
 * (Buffer.byteLength of a string that keeps growing while a write is in flight): under load that cost more than
 * the writes it saves, about 6 microseconds a line at 20,000 requests a second. A line written at once is also a
 * line not lost if the process dies.
 */
export function createLogger(
  level: string,
  format: LogFormat = 'json',
  isTTY = process.stdout.isTTY === true,
): FastifyBaseLogger {
  const destination =
    resolveLogFormat(format, isTTY) === 'pretty' ? prettyStream() : pino.destination({ fd: 1, sync: true });
  return pino(loggerOptions(level) as pino.LoggerOptions, destination) as unknown as FastifyBaseLogger;
}

type LogFn = (...args: unknown[]) => void;
type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
interface PinoLike {
  level: string;
  child(bindings: Record<string, unknown>, options?: object): PinoLike;
  isLevelEnabled(level: string): boolean;
}

/**
 * A request's logger (request.log, bound to its reqId) made only when the request logs something. Fastify makes a
 * pino child per request, and with redaction configured pino runs every redact path over the child's bindings
 * when it is made: a few microseconds per request for a logger most requests never use at level warn.
 */
class LazyChildLogger {
  private real: PinoLike | null = null;
  constructor(
    private readonly parent: PinoLike,
    private readonly own: Record<string, unknown>,
  ) {}
  private get logger(): PinoLike {
    return (this.real ??= this.parent.child(this.own));
  }
  private log(level: Level, args: unknown[]) {
    if ((this.real ?? this.parent).isLevelEnabled(level))
      (this.logger as unknown as Record<Level, LogFn>)[level](...args);
  }
  get level() {
    return (this.real ?? this.parent).level;
  }
  set level(level: string) {
    this.logger.level = level;
  }
  isLevelEnabled(level: string) {
    return (this.real ?? this.parent).isLevelEnabled(level);
  }
  fatal(...args: unknown[]) {
    this.log('fatal', args);
  }
  error(...args: unknown[]) {
    this.log('error', args);
  }
  warn(...args: unknown[]) {
    this.log('warn', args);
  }
  info(...args: unknown[]) {
    this.log('info', args);
  }
  debug(...args: unknown[]) {
    this.log('debug', args);
  }
  trace(...args: unknown[]) {
    this.log('trace', args);
  }
  silent() {}
  child(bindings: Record<string, unknown>, options?: object) {
    return this.logger.child(bindings, options);
  }
  bindings() {
    return (this.logger as unknown as { bindings(): Record<string, unknown> }).bindings();
  }
}

/** Fastify's childLoggerFactory: request loggers made on first use (route-level log options: at once). */
export function lazyChildLoggerFactory(
  this: unknown,
  logger: FastifyBaseLogger,
  bindings: Record<string, unknown>,
  options: object,
): FastifyBaseLogger {
  const parent = logger as unknown as PinoLike;
  if (Object.keys(options).length > 0) return parent.child(bindings, options) as unknown as FastifyBaseLogger;
  return new LazyChildLogger(parent, bindings) as unknown as FastifyBaseLogger;
}
