import type { Readable } from 'node:stream';
import { lazyModule } from '../../core/lazy-module.ts';

/** libvips is loaded with the first thumbnail, not at start-up (docs/adr/0010-lazy-start-up.md). */
const sharp = lazyModule<typeof import('sharp').default>('sharp');

export const THUMBNAIL_EDGE = 512;

/**
 * A WebP of at most THUMBNAIL_EDGE px on the long side, turned upright by its EXIF orientation. Decoding is bounded
 * (limitInputPixels refuses decompression bombs) and a truncated or corrupt image fails instead of rendering grey;
 * the caller only ever hands images to it.
 */
export async function makeThumbnail(source: Readable): Promise<Buffer> {
  const transformer = sharp()({ limitInputPixels: 50_000_000, failOn: 'error', sequentialRead: true })
    .rotate()
    .resize(THUMBNAIL_EDGE, THUMBNAIL_EDGE, { fit: 'inside', withoutEnlargement: true })
    .webp({ quality: 80 });
  source.on('error', (err) => transformer.destroy(err));
  return source.pipe(transformer).toBuffer();
}
