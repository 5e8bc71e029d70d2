// What an upload route does with a request body it stops reading: shared by the routes that stream a body to
// storage (attachments, imports), so both end an abandoned upload the same way.
import type { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * An upload refused before its end (too large, a refused type) leaves the rest of the body unread, and a
 * keep-alive connection would wait on it for good: the answer closes the connection, and what the client still
 * sends is discarded as it arrives (closing with unread data would reset the connection and lose the answer). A 413
 * closes it even when the body has all arrived, so a client streaming too much learns it once, whatever its timing.
 */
export async function abandonUnreadBody(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
  const unread = reply.statusCode >= 400 && !request.raw.complete;
  if (unread || reply.statusCode === 413) reply.header('connection', 'close');
  if (unread) {
    request.raw.unpipe();
    request.raw.resume();
  }
  return payload;
}

/**
 * Runs an upload that reads `source`. A response closed before it finished (the request deadline's 503, a client
 * gone) ends the upload: nothing will read the rest of the body, so the source is destroyed with an error and
 * storage stops waiting on it (the staging file is removed and closed). Its failure then goes nowhere, as the
 * client already has its answer.
 */
export async function readingBody<T>(reply: FastifyReply, source: Readable, work: () => Promise<T>) {
  const onClose = () => {
    if (source.destroyed || source.readableEnded) return;
    const err = Object.assign(new Error('The response closed before the upload was read'), {
      code: 'ERR_STREAM_PREMATURE_CLOSE',
    });
    source.destroy(err);
  };
  reply.raw.once('close', onClose);
  try {
    return await work();
  } catch (err) {
    if (reply.sent) return reply;
    throw err;
  } finally {
    reply.raw.off('close', onClose);
  }
}
