import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestApp, Res } from './test-app.ts';

/** A multipart/form-data body: the fields in order, then the file part. */
export function multipart(
  fields: Record<string, string>,
  file?: { name: string; type?: string; bytes: Buffer },
): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----fleet${Math.random().toString(16).slice(2)}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields))
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  if (file)
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\n` +
          `Content-Type: ${file.type ?? 'application/octet-stream'}\r\n\r\n`,
      ),
      file.bytes,
      Buffer.from('\r\n'),
    );
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

export async function uploadFile(
  t: TestApp,
  key: string,
  subject: { subjectType: string; subjectId: string; caption?: string },
  file: { name: string; type?: string; bytes: Buffer },
): Promise<Res> {
  const { payload, headers } = multipart(subject as Record<string, string>, file);
  return (await t.app.inject({
    method: 'POST',
    url: '/api/v1/attachments',
    headers: { ...headers, authorization: `Bearer ${key}` },
    payload,
  })) as Res;
}

/** A temporary ATTACHMENTS_DIR for one test file. */
export function tempAttachmentsDir(): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'fleet-attachments-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A 1x1 PNG and a small JPEG-like PNG generated with sharp, in tests that need real images. */
export const TINY_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);
