import type { FastifyServerOptions } from 'fastify';

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
