import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../../src/cli/admin.ts';
import { createTestApp, type TestApp } from '../helpers/app/test-app.ts';
import { makeAsset } from '../helpers/app/factories.ts';
import type { TestTenant } from '../helpers/app/tenants.ts';
import { tempAttachmentsDir, uploadFile } from '../helpers/app/attachments.ts';
import { startS3rver, type TestBucket } from '../helpers/app/s3rver.ts';
import { loadConfig } from '../../src/config.ts';
import { TEST_SECRETS_KEYS } from '../helpers/run/test-env.ts';

let t: TestApp;
let acme: TestTenant;
let bucket: TestBucket;
const storage = tempAttachmentsDir();
const ids: string[] = [];

beforeAll(async () => {
  bucket = await startS3rver();
  t = await createTestApp({ ATTACHMENTS_DIR: storage.dir });
  acme = await t.tenant();
  const assetId = await makeAsset(t, acme.key);
  for (const text of ['first file', 'second file', 'third file'])
    ids.push(
      (
        await uploadFile(
          t,
          acme.key,
          { subjectType: 'asset', subjectId: assetId },
          { name: 'a.txt', bytes: Buffer.from(text) },
        )
      ).json().attachmentId,
    );
});
afterAll(async () => {
  await t.close();
  await bucket.close();
  storage.remove();
});

async function admin(env: Record<string, string>, ...argv: string[]) {
  const config = loadConfig({ SECRETS_ENCRYPTION_KEYS: TEST_SECRETS_KEYS, ATTACHMENTS_DIR: storage.dir, ...env });
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdminCommand(t.db, config, argv, { out: (s) => out.push(s), err: (s) => err.push(s) });
  return { code, err: err.join('\n'), json: () => JSON.parse(out.join('\n')) };
}

describe('admin attachments', () => {
  it('check finds every row with its bytes, then names the one whose bytes are gone', async () => {
    const ok = await admin({}, 'attachments', 'check', '--verify', '--json');
    expect(ok.code, ok.err).toBe(0);
    expect(ok.json()).toMatchObject({ checked: 3, missing: [], mismatched: [] });
    const row = await t.db.prisma.attachment.findUniqueOrThrow({ where: { id: ids[2] } });
    rmSync(path.join(storage.dir, ...row.storageKey!.split('/')));
    const bad = await admin({}, 'attachments', 'check', '--json');
    expect(bad.code).toBe(1);
    expect(bad.json()).toMatchObject({ checked: 3, missing: [ids[2]] });
    expect(bad.err).toContain(`missing: ${ids[2]}`);
  });

  it('copy-to-s3 copies with progress, resumes, and with --switch the rows serve from the bucket', async () => {
    const first = await admin(bucket.env, 'attachments', 'copy-to-s3', '--json');
    expect(first.code).toBe(1);
    expect(first.json()).toMatchObject({ copied: 2, skipped: 0, failed: [{ id: ids[2] }] });
    expect(first.err).toMatch(/3\/3 rows: 2 copied/);
    await t.db.prisma.attachment.delete({ where: { id: ids[2] } });
    const again = await admin(bucket.env, 'attachments', 'copy-to-s3', '--switch', '--json');
    expect(again.code, again.err).toBe(0);
    expect(again.json()).toMatchObject({ copied: 0, skipped: 2, switched: 2 });
    // The rows now name the bucket's objects, and the bucket holds their bytes.
    const onS3 = await admin(bucket.env, 'attachments', 'check', '--verify', '--json');
    expect(onS3.code, onS3.err).toBe(0);
    expect(onS3.json()).toMatchObject({ storage: 's3', checked: 2, missing: [], mismatched: [] });
  });
});
