import { okTrue, str, is, type Step } from './step.ts';

const BOUNDARY = 'fleet-walkthrough-7d1f';
/** A 1 x 1 GIF whose bytes are all ASCII, so the multipart body travels as text in the collection. */
const GIF =
  'GIF89a\u0001\u0000\u0001\u0000\u0000\u0000\u0000,\u0000\u0000\u0000\u0000\u0001\u0000\u0001\u0000\u0000\u0002\u0002D\u0001\u0000;';

const field = (name: string, value: string) =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
const MULTIPART =
  field('subjectType', 'asset') +
  field('subjectId', '{{assetId}}') +
  field('caption', 'Left side, before the repair') +
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="left side.gif"\r\n` +
  `Content-Type: image/gif\r\n\r\n${GIF}\r\n--${BOUNDARY}--\r\n`;

/** Walkthrough steps: attachments of the asset, in order. */
export const ATTACHMENT_STEPS: Step[] = [
  {
    operationId: 'uploadAttachment',
    name: 'Upload a photo of the asset (multipart: subjectType, subjectId, caption, then file)',
    headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    rawBody: MULTIPART,
    status: 201,
    save: { attachmentId: 'attachmentId' },
    checks: [okTrue, str('attachmentId'), is('contentType', 'image/gif'), str('sha256')],
  },
  {
    operationId: 'listAttachments',
    query: { subjectType: 'asset', subjectId: '{{assetId}}', limit: '10' },
    status: 200,
    checks: [okTrue, { path: 'attachments', type: 'array' }, is('attachments.0.attachmentId', '{{attachmentId}}')],
  },
  {
    operationId: 'getAttachment',
    params: { id: '{{attachmentId}}' },
    status: 200,
    checks: [okTrue, is('attachment.status', 'READY'), is('attachment.filename', 'left side.gif')],
  },
  {
    operationId: 'updateAttachment',
    params: { id: '{{attachmentId}}' },
    body: { caption: 'Left side, boom cylinder' },
    status: 200,
    checks: [okTrue, is('attachment.caption', 'Left side, boom cylinder')],
  },
  {
    operationId: 'getAttachmentContent',
    params: { id: '{{attachmentId}}' },
    status: 200,
    contentType: 'image/gif',
  },
  {
    operationId: 'getAttachmentThumbnail',
    params: { id: '{{attachmentId}}' },
    status: 200,
    contentType: 'image/webp',
  },
  {
    operationId: 'createAttachmentUpload',
    name: 'Start a presigned upload of a PDF invoice (PUT the bytes to upload.url, then complete)',
    body: {
      subjectType: 'asset',
      subjectId: '{{assetId}}',
      filename: 'invoice-0042.pdf',
      contentType: 'application/pdf',
      size: 48213,
    },
    status: 201,
    save: { pendingAttachmentId: 'attachmentId' },
    checks: [okTrue, str('attachmentId'), is('upload.method', 'PUT'), str('upload.url')],
  },
  {
    operationId: 'completeAttachmentUpload',
    name: 'Completing before the bytes were sent is 409 upload_incomplete',
    params: { id: '{{pendingAttachmentId}}' },
    status: 409,
    checks: [is('error', 'upload_incomplete')],
  },
  {
    operationId: 'deleteAttachment',
    params: { id: '{{pendingAttachmentId}}' },
    status: 200,
    checks: [okTrue],
  },
];
