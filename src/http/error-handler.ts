import type { FastifyError, FastifyInstance } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { ApiError } from './errors.ts';

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
  const e = err as { name?: string; code?: string; meta?: { driverAdapterError?: { cause?: { constraint?: { index?: string } } } } };
  if (e?.name !== 'PrismaClientKnownRequestError' || e.code !== 'P2003') return null;
  const constraint = e.meta?.driverAdapterError?.cause?.constraint?.index ?? '';
  return /_([A-Za-z0-9]+)_fkey$/.exec(constraint)?.[1] ?? 'body';
}

/** Maps every failure to the spec's error body; 5xx are logged with the request id and never leak internals. */
export function registerErrorHandling(app: FastifyInstance) {
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
      return reply.code(422).send({ ok: false, error: 'validation_failed', message: 'The request is not valid; see fieldErrors.', fieldErrors });
    }
    if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return reply.code(415).send({ ok: false, error: 'unsupported_media_type', message: 'Send request bodies as application/json' });
    }
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return reply.code(413).send({ ok: false, error: 'payload_too_large', message: 'The request body is too large' });
    }
    if (err.statusCode === 400 && (err.code?.startsWith('FST_ERR_CTP') || err instanceof SyntaxError)) {
      return reply.code(400).send({ ok: false, error: 'invalid_json', message: 'The request body is not valid JSON' });
    }
    const vanished = vanishedReference(err);
    if (vanished) {
      return reply.code(422).send({
        ok: false, error: 'validation_failed', message: 'A referenced record no longer exists.',
        fieldErrors: { [vanished]: 'refers to a record that no longer exists (it was deleted meanwhile)' },
      });
    }
    if (isResponseSerializationError(err)) {
      request.log.error({ err, issues: err.cause.issues }, 'response did not match its declared schema');
    } else {
      request.log.error({ err }, 'unhandled error');
    }
    return reply
      .code(500)
      .send({ ok: false, error: 'internal_error', message: 'Something went wrong on our side', requestId: request.id });
  });

  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send({ ok: false, error: 'not_found', message: `No route ${request.method} ${request.url.split('?')[0]}` }),
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
