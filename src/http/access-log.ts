import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify';
import { scrubUrl } from '../logger.ts';

/**
 * The two lines Fastify logs per request at info ("incoming request", "request completed"), with the fields they
 * have always had, written without running pino's redaction over them: their fields are fixed and none carries
 * a credential once the URL is scrubbed (scrubUrl, what the redaction did to req.url). That redaction, and a
 * redacting child logger per request, were most of what logging at info cost a request. Error lines (a request
 * that failed while its answer was being written) keep Fastify's own path and the redaction.
 */
// request.log is pino's (or the lazy child of logger.ts): both answer isLevelEnabled, which Fastify's type omits.
const infoEnabled = (request: FastifyRequest) =>
  (request.log as unknown as { isLevelEnabled(level: string): boolean }).isLevelEnabled('info');

export class AccessLogController extends LogController {
  private readonly lines: FastifyBaseLogger;

  constructor(logger: FastifyBaseLogger) {
    super();
    // Only the fields below ever reach this logger: nothing to redact (see above).
    this.lines = logger.child({}, { redact: [] } as never);
  }

  override incomingRequest(request: FastifyRequest): void {
    if (this.isLogDisabled(request) || !infoEnabled(request)) return;
    this.lines.info(
      {
        reqId: request.id,
        req: {
          method: request.method,
          url: scrubUrl(request.url),
          version: request.headers['accept-version'],
          host: request.host,
          remoteAddress: request.ip,
          remotePort: request.socket?.remotePort,
        },
      },
      'incoming request',
    );
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) return super.requestCompleted(error, request, reply);
    if (this.isLogDisabled(request) || !infoEnabled(request)) return;
    this.lines.info(
      { reqId: request.id, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime },
      'request completed',
    );
  }
}
