/** One request of the walkthrough (src/contracts/walkthrough.ts) and the checks on its answer. */
export interface Check {
  /** Dotted path into the JSON body, e.g. `results.1.ok`. */
  path: string;
  equals?: string | number | boolean | null;
  type?: 'string' | 'number' | 'boolean' | 'array' | 'object';
}

export interface Step {
  operationId: string;
  name?: string;
  /** Path parameters (values may be `{{var}}`). */
  params?: Record<string, string>;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: unknown;
  /** A body sent as written instead of JSON (a multipart upload); its Content-Type comes from `headers`. */
  rawBody?: string;
  status: number;
  /** Expected media type of the answer when it is not JSON. */
  contentType?: string;
  /** Collection variable name to JSON path of the value to keep. */
  save?: Record<string, string>;
  checks?: Check[];
}

export const okTrue: Check = { path: 'ok', equals: true };
export const str = (path: string): Check => ({ path, type: 'string' });
export const is = (path: string, equals: Check['equals']): Check => ({ path, equals });
