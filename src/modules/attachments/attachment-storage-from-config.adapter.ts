import type { Config } from '../../config.ts';
import { createLocalStorage } from './attachment-local-storage.adapter.ts';
import { createS3Storage } from './attachment-s3-storage.adapter.ts';
import type { AttachmentStorage } from './attachment-storage-interface.adapter.ts';

/** The store ATTACHMENTS_STORAGE names. */
export function createStorage(options: Config['attachments']): AttachmentStorage {
  return options.storage === 's3' ? createS3Storage(options.s3) : createLocalStorage(options.dir);
}
