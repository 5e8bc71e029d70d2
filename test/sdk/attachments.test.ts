import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FleetClient } from '@fleet-ops/sdk';
import { makeAsset } from '../helpers/app/factories.ts';
import { tempAttachmentsDir } from '../helpers/app/attachments.ts';
import { startSdkServer, type SdkServer } from '../helpers/sdk/sdk-server.ts';

let s: SdkServer;
let client: FleetClient;
let assetId: string;
const dir = tempAttachmentsDir();
const sha = (b: Buffer | Uint8Array) => createHash('sha256').update(b).digest('hex');
const csv = Buffer.from('part,qty\nseal kit,2\nfilter,1\n'.repeat(2000));

beforeAll(async () => {
  s = await startSdkServer({ ATTACHMENTS_DIR: path.join(dir.dir, 'store') });
  const tenant = await s.t.tenant();
  client = s.client(tenant.key);
  assetId = await makeAsset(s.t, tenant.key);
});
afterAll(async () => {
  await s.close();
  dir.remove();
});

describe('attachments.upload', () => {
  it('uploads from a path, a Node stream, a web stream and a Blob; the bytes come back identical', async () => {
    const file = path.join(dir.dir, 'parts list.csv');
    writeFileSync(file, csv);
    const subject = { subjectType: 'asset' as const, subjectId: assetId };
    const sources = [
      { file },
      { file: Readable.from([csv.subarray(0, 1000), csv.subarray(1000)]), filename: 'parts.csv' },
      { file: Readable.toWeb(Readable.from([csv])) as ReadableStream<Uint8Array>, filename: 'parts.csv' },
      { file: new Blob([csv]), filename: 'parts.csv' },
    ];
    for (const source of sources) {
      const res = await client.attachments.upload({ ...subject, caption: 'Parts', ...source });
      expect(res).toMatchObject({ ok: true, sha256: sha(csv), size: csv.length, contentType: 'text/csv' });
      const blob = await client.attachments.getContent(res.attachmentId);
      expect(sha(new Uint8Array(await blob.arrayBuffer()))).toBe(sha(csv));
    }
    const detail = await client.attachments.list({ subjectType: 'asset', subjectId: assetId });
    expect(detail.attachments[detail.attachments.length - 1]).toMatchObject({
      filename: 'parts list.csv',
      caption: 'Parts',
    });
  });

  it('reports a refused file as a FleetApiError with its code', async () => {
    const err = await client.attachments
      .upload({
        subjectType: 'asset',
        subjectId: assetId,
        file: new Blob(['<html><script>1</script>']),
        filename: 'x.txt',
      })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 415, code: 'unsupported_media_type' });
  });
});
