import http from 'node:http';
import type { FastifyError, FastifyInstance } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { ApiError, errorBody, type ErrorCode } from '../core/errors.ts';
import { isDatabaseUnavailable } from '../db/unavailable.ts';

/** Seconds a client should wait before retrying after a 503 (database down, deadline passed, shutting down). */
export const RETRY_AFTER_SEC = 5;
const OUTAGE_LOG_INTERVAL_MS = 10_000;

function fieldFromPath(instancePath: string, context: string | undefined): string {
  const path = instancePath.replace(/^\//, '').split('/').filter(Boolean).join('.');
  if (path) return path;
  return context === 'body' || !context ? 'body' : context;
}

/**
 * References are checked before writing, but a referenced row can be deleted between the check and the
 * commit (a yard deleted while an asset is created into it). The foreign key then refuses the write
 * (Prisma P2003); the constraint name `<table>_<column>_fkey` names the field.
 */
function vanishedReference(err: unknown): string | null {
  const e = err as {
    name?: string;
    code?: string;
    meta?: { driverAdapterError?: { cause?: { constraint?: { index?: string } } } };
  };
  if (e?.name !== 'PrismaClientKnownRequestError' || e.code !== 'P2003') return null;
  const constraint = e.meta?.driverAdapterError?.cause?.constraint?.index ?? '';
  return /_([A-Za-z0-9]+)_fkey$/.exec(constraint)?.[1] ?? 'body';
}

/** Maps every failure to the spec's error body; 5xx are logged with the request id and never leak internals. */
export function registerErrorHandling(app: FastifyInstance) {
  // An outage fails every request at once: one warning per interval (with how many were answered 503)
  // instead of an error line, with a stack trace, per request.
  let outageLoggedAt = 0;
  let outageSuppressed = 0;
  const warnOutage = (request: { log: FastifyInstance['log'] }, err: unknown) => {
    const now = Date.now();
    if (now - outageLoggedAt < OUTAGE_LOG_INTERVAL_MS) {
      outageSuppressed += 1;
      return;
    }
    request.log.warn(
      { reason: (err as Error)?.message, suppressed: outageSuppressed },
      'database unavailable; answering 503',
    );
    outageLoggedAt = now;
    outageSuppressed = 0;
  };

  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err instanceof ApiError) {
      return reply.code(err.statusCode).send({ ok: false, error: err.code, message: err.message, ...err.extra });
    }
    if (hasZodFastifySchemaValidationErrors(err)) {
      const fieldErrors: Record<string, string> = {};
      for (const issue of err.validation) {
        const field = fieldFromPath(issue.instancePath, err.validationContext);
        fieldErrors[field] ??= issue.message;
      }
      return reply
        .code(422)
        .send(errorBody('validation_failed', 'The request is not valid; see fieldErrors.', { fieldErrors }));
    }
    if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return reply.code(415).send(errorBody('unsupported_media_type', 'Send request bodies as application/json'));
    }
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return reply.code(413).send(errorBody('payload_too_large', 'The request body is too large'));
    }
    if (err.statusCode === 400 && (err.code?.startsWith('FST_ERR_CTP') || err instanceof SyntaxError)) {
      return reply.code(400).send(errorBody('invalid_json', 'The request body is not valid JSON'));
    }
    if (err.code === 'FST_ERR_HANDLER_TIMEOUT') {
      warnOutage(request, err);
      return reply
        .code(503)
        .header('Retry-After', RETRY_AFTER_SEC)
        .send(
          errorBody('request_timeout', 'The request took too long and was abandoned; nothing was saved. Retry later.'),
        );
    }
    if (isDatabaseUnavailable(err)) {
      warnOutage(request, err);
      return reply
        .code(503)
        .header('Retry-After', RETRY_AFTER_SEC)
        .send(errorBody('database_unavailable', 'The database is unavailable; nothing was saved. Retry later.'));
    }
    // Any other framework refusal (bad Content-Length, etc.) keeps its 4xx status but gets the API's body.
    if (
      typeof err.statusCode === 'number' &&
      err.statusCode >= 400 &&
      err.statusCode < 500 &&
      err.code?.startsWith('FST_')
    ) {
      return reply.code(err.statusCode).send(errorBody('bad_request', err.message));
    }
    const vanished = vanishedReference(err);
    if (vanished) {
      return reply.code(422).send(
        errorBody('validation_failed', 'A referenced record no longer exists.', {
          fieldErrors: { [vanished]: 'refers to a record that no longer exists (it was deleted meanwhile)' },
        }),
      );
    }
    if (isResponseSerializationError(err)) {
      request.log.error({ err, issues: err.cause.issues }, 'response did not match its declared schema');
    } else {
      request.log.error({ err }, 'unhandled error');
    }
    return reply
      .code(500)
      .send(errorBody('internal_error', 'Something went wrong on our side', { requestId: request.id }));
  });

  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send(errorBody('not_found', `No route ${request.method} ${request.url.split('?')[0]}`)),
  );
}

/** JSON bodies: empty means "no body"; anything unparseable is 400 invalid_json; prototype poisoning refused. */
export function registerJsonParser(app: FastifyInstance) {
  const parse = app.getDefaultJsonParser('error', 'error');
  // Bodies are JSON only (spec rule 3): drop Fastify's text/plain parser so anything else is a 415.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (typeof body === 'string' && body.trim() === '') return done(null, undefined);
    parse(request, body as string, (err, value) => {
      if (err) return done(new ApiError(400, 'invalid_json', 'The request body is not valid JSON'), undefined);
      done(null, value);
    });
  });
}

const CLIENT_ERRORS: Record<string, [number, ErrorCode, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'headers_too_large', 'The request headers are too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'request_timeout', 'The request was not received in time'],
};

/**
 * Errors Node's HTTP parser raises before Fastify sees a request (oversized headers, a request that
 * arrives too slowly, malformed HTTP): answered on the raw socket, in the API's error body.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: import('node:net').Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, error, message] = CLIENT_ERRORS[err.code ?? ''] ?? [
    400,
    'bad_request',
    'The request is not valid HTTP',
  ];
  const body = JSON.stringify({ ok: false, error, message });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/**
 * While shutting down, requests still arriving on kept-alive connections are refused with a 503 in
 * the API's error body and a Retry-After, so clients and load balancers retry on another instance.
 */
export function registerShutdownRefusal(app: FastifyInstance) {
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', (_request, reply, done) => {
    if (!closing) return done();
    void reply
      .code(503)
      .header('Retry-After', RETRY_AFTER_SEC)
      .header('Connection', 'close')
      .send(errorBody('shutting_down', 'The server is shutting down; retry shortly.'));
  });
}
