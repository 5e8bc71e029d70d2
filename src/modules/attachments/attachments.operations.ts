// Attachments named by other records (a flag's photo, a tool event's photo): checked in the caller's transaction.
import type { Tx } from '../../db/transaction.ts';
import { ValidationError } from '../../core/errors.ts';
import { isImage, type SubjectType } from './attachment-types.rules.ts';
import { findReadyAttachments } from './attachments.repository.ts';
import { contentUrlOf } from './attachments.schemas.ts';

/**
 * The READY image attachment `id` of the given subject (a flag's photo is uploaded on its asset before the flag
 * exists; a tool event's on the tool), with its content URL; 422 on `field` otherwise.
 */
export async function photoAttachment(
  tx: Tx,
  orgId: string,
  subject: { type: SubjectType; id: string },
  id: string,
  baseUrl: string,
  field = 'photoAttachmentId',
): Promise<{ attachmentId: string; contentUrl: string }> {
  const [found] = await findReadyAttachments(tx, orgId, subject.type, subject.id, [id]);
  if (!found)
    throw new ValidationError({
      [field]: `no uploaded attachment with this id on this ${subject.type.replace('_', ' ')}`,
    });
  if (!isImage(found.contentType)) throw new ValidationError({ [field]: 'is not an image' });
  return { attachmentId: found.id, contentUrl: contentUrlOf(baseUrl, found.id) };
}
