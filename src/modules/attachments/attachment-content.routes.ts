import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import type { AppDeps } from '../../composition.ts';
import { contextOf } from '../../core/context.ts';
import { IdParams } from '../../core/schemas.ts';
import { SUBJECT_SCOPES, type Download } from './attachments.service.ts';
import {
  CONTENT_ERRORS,
  CONTENT_HEADERS,
  PUT_UPLOAD_ERRORS,
  CONTENT_MEDIA,
  THUMBNAIL_MEDIA,
  UPLOAD_PUT_BODY,
} from './attachment-media.schemas.ts';
import { ContentQuery, UploadedResponse, UploadTokenParams } from './attachments.schemas.ts';
import { abandonUnreadBody, readingBody } from '../../http/upload-body.ts';

const binary = z.string().describe('The bytes');

function send(reply: FastifyReply, d: Download) {
  reply.code(d.status).headers(d.headers);
  return d.body ? reply.send(d.body) : reply.send();
}

export const attachmentContentRoutes =
  ({ services }: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const attachments = services.attachments;
    const tags = ['attachments'];

    app.get(
      '/attachments/:id/content',
      {
        config: { scope: null, subjectScopes: SUBJECT_SCOPES.read },
        schema: {
          operationId: 'getAttachmentContent',
          tags,
          summary: 'The bytes: strong ETag (304), single byte ranges (206, 416), download unless inline is asked',
          params: IdParams,
          querystring: ContentQuery,
          response: { 200: binary, 206: binary, 304: z.null(), 416: z.null(), ...CONTENT_ERRORS },
          'x-content': CONTENT_MEDIA,
          'x-headers': CONTENT_HEADERS,
        },
      },
      async (req, reply) =>
        send(
          reply,
          await attachments.content(contextOf(req), req.params.id, {
            range: req.headers.range,
            ifRange: [req.headers['if-range']].flat()[0],
            ifNoneMatch: req.headers['if-none-match'],
            disposition: req.query.disposition,
          }),
        ),
    );

    app.get(
      '/attachments/:id/thumbnail',
      {
        config: { scope: null, subjectScopes: SUBJECT_SCOPES.read },
        schema: {
          operationId: 'getAttachmentThumbnail',
          tags,
          summary: 'WebP of an image, at most 512 px on the long side (404 for other files)',
          params: IdParams,
          response: { 200: binary, 304: z.null(), ...CONTENT_ERRORS },
          'x-content': THUMBNAIL_MEDIA,
        },
      },
      async (req, reply) =>
        send(reply, await attachments.thumbnail(contextOf(req), req.params.id, req.headers['if-none-match'])),
    );
  };

/** The local upload URL: outside the key chain, the signed single-use token is the credential. */
export const attachmentUploadRoutes =
  ({ services }: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    // The body is the file, of any type: left unread for the handler to stream.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_req, _payload, done) => done(null));
    app.addHook('onSend', abandonUnreadBody);
    app.put(
      '/api/v1/attachments/uploads/:token',
      {
        config: { public: true },
        schema: {
          // The upload URL is opaque (a bucket's on S3): clients use the one they were given, never build it.
          hide: true,
          operationId: 'putAttachmentUpload',
          tags: ['attachments'],
          summary: 'The upload URL of a presigned upload on local storage (no API key: the URL is the credential)',
          params: UploadTokenParams,
          response: { 200: UploadedResponse, ...PUT_UPLOAD_ERRORS },
          'x-request-content': UPLOAD_PUT_BODY,
        },
      },
      (req, reply) => readingBody(reply, req.raw, () => services.attachments.receive(req.params.token, req.raw)),
    );
  };
