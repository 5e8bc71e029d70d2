import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { makeAsset } from '../../helpers/app/factories.ts';
import { securitySuite } from '../../helpers/app/security-suite.ts';
import { uploadFile } from '../../helpers/app/attachments.ts';
import { importAndCommit, importOf, startImport } from '../../helpers/app/imports.ts';

let t: TestApp;
let acme: TestTenant;
let other: TestTenant;
let foreignImportId: string;

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  other = await t.tenant('Other');
  foreignImportId = (
    await startImport(t, other.key, 'assets', 'customerAssetNumber,nickname,assetClass\nX,Y,trailer\n')
  ).json().importId;
});
afterAll(() => t.close());

const assetCsv = (...rows: string[]) => ['customerAssetNumber,nickname,assetClass', ...rows].join('\n');
const statusOf = async (id: string) => (await importOf(t, acme.key, id)).status;

securitySuite('imports', () => ({ t, tenant: acme }), [
  { label: 'POST /imports', method: 'POST', path: () => '/api/v1/imports', scope: 'imports:write', body: {} },
  { label: 'GET /imports', method: 'GET', path: () => '/api/v1/imports', scope: 'imports:read' },
  {
    label: 'GET /imports/:id',
    method: 'GET',
    path: () => `/api/v1/imports/${foreignImportId}`,
    scope: 'imports:read',
    crossTenant: true,
  },
  {
    label: 'GET /imports/:id/errors',
    method: 'GET',
    path: () => `/api/v1/imports/${foreignImportId}/errors`,
    scope: 'imports:read',
    crossTenant: true,
  },
  {
    label: 'GET /imports/:id/rows',
    method: 'GET',
    path: () => `/api/v1/imports/${foreignImportId}/rows`,
    scope: 'imports:read',
    crossTenant: true,
  },
  {
    label: 'POST /imports/:id/commit',
    method: 'POST',
    path: () => `/api/v1/imports/${foreignImportId}/commit`,
    scope: 'imports:write',
    crossTenant: true,
  },
  {
    label: 'POST /imports/:id/rollback',
    method: 'POST',
    path: () => `/api/v1/imports/${foreignImportId}/rollback`,
    scope: 'imports:write',
    crossTenant: true,
  },
  {
    label: 'POST /imports/mappings',
    method: 'POST',
    path: () => '/api/v1/imports/mappings',
    scope: 'imports:write',
    body: { name: 'x', type: 'assets', mapping: {} },
  },
  { label: 'GET /imports/mappings', method: 'GET', path: () => '/api/v1/imports/mappings', scope: 'imports:read' },
]);

describe('scopes of the imported type', () => {
  it("needs the type's write scope to start, commit and roll back", async () => {
    const { key } = await acme.newKey({ scopes: 'imports:read,imports:write,assets:read' });
    const res = await startImport(t, key, 'assets', assetCsv('S-1,Scoped,trailer'));
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toBe('missing_scope:assets:write');
    const hours = await startImport(t, key, 'meter_readings', 'assetId,loggedAt,hoursReading\nx,2026-01-01,1\n');
    expect(hours.json().error).toBe('missing_scope:hours:write');
    const id = (await startImport(t, acme.key, 'assets', assetCsv('S-1,Scoped,trailer'))).json().importId;
    const commit = await t.api.post(`/api/v1/imports/${id}/commit`, key);
    expect(commit.json().error).toBe('missing_scope:assets:write');
  });
});

describe('files that cannot be read as their type', () => {
  it('a missing required column fails the import with one reason naming it', async () => {
    const id = (await startImport(t, acme.key, 'assets', 'nickname,assetClass\nA,trailer\nB,trailer\n')).json()
      .importId;
    const imp = await importOf(t, acme.key, id);
    expect(imp.status).toBe('failed');
    expect(imp.failureReason).toMatch(/no column for customerAssetNumber/);
    const failed = await t.db.prisma.event.findMany({ where: { orgId: acme.orgId, type: 'import.failed' } });
    expect(failed.map((e) => (e.data as { importId: string }).importId)).toContain(id);
  });

  it('binary data is not CSV', async () => {
    const id = (await startImport(t, acme.key, 'assets', Buffer.from([0x50, 0x4b, 0x03, 0x04, 0, 0, 1]))).json()
      .importId;
    expect(await importOf(t, acme.key, id)).toMatchObject({
      status: 'failed',
      failureReason: expect.stringMatching(/binary/),
    });
  });

  it('reads Windows-1252 (multipart) and UTF-8 from an attachment (JSON variant)', async () => {
    const latin = Buffer.concat([
      Buffer.from('customerAssetNumber,nickname,assetClass\r\nW-1,Chargeuse '),
      Buffer.from([0xe9]), // é in Windows-1252
      Buffer.from(',off-road\r\n'),
    ]);
    const multi = (await startImport(t, acme.key, 'assets', latin)).json().importId;
    const rowsOf = async (id: string) => (await t.api.get(`/api/v1/imports/${id}/rows`, acme.key)).json().rows;
    expect((await rowsOf(multi))[0]).toMatchObject({ action: 'create', values: { nickname: 'Chargeuse é' } });

    const subject = await makeAsset(t, acme.key, { nickname: 'Holder' });
    const bytes = Buffer.from('\ufeffcustomerAssetNumber,nickname,assetClass\r\nW-2,"Pelle, ""grande""",off-road\r\n');
    const up = await uploadFile(
      t,
      acme.key,
      { subjectType: 'asset', subjectId: subject },
      { name: 'w.csv', type: 'text/csv', bytes },
    );
    expect(up.statusCode).toBe(201);
    const res = await t.api.post('/api/v1/imports', acme.key, {
      type: 'assets',
      uploadAttachmentId: up.json().attachmentId,
    });
    expect(res.statusCode).toBe(202);
    await t.deps.background.idle();
    expect((await rowsOf(res.json().importId))[0]).toMatchObject({
      action: 'create',
      values: { customerAssetNumber: 'W-2', nickname: 'Pelle, "grande"' },
    });
  });
});

describe('commit', () => {
  it('fails, writing nothing, when the data changed since validation', async () => {
    const first = (await startImport(t, acme.key, 'assets', assetCsv('C-1,Changed,trailer'))).json().importId;
    const second = (await startImport(t, acme.key, 'assets', assetCsv('C-1,Changed,trailer'))).json().importId;
    expect((await t.api.post(`/api/v1/imports/${first}/commit`, acme.key)).statusCode).toBe(202);
    expect(await statusOf(first)).toBe('completed');
    expect((await t.api.post(`/api/v1/imports/${second}/commit`, acme.key)).statusCode).toBe(202);
    const imp = await importOf(t, acme.key, second);
    expect(imp.status).toBe('failed');
    expect(imp.failureReason).toMatch(/row 2 was to be create and would now be unchanged/);
    expect(await t.db.prisma.asset.count({ where: { orgId: acme.orgId, customerAssetNumber: 'C-1' } })).toBe(1);
  });

  it('refuses a second commit of the type while one runs', async () => {
    const running = (await startImport(t, acme.key, 'assets', assetCsv('R-1,Running,trailer'))).json().importId;
    const waiting = (await startImport(t, acme.key, 'assets', assetCsv('R-2,Waiting,trailer'))).json().importId;
    await t.db.prisma.import.update({ where: { id: running }, data: { status: 'committing', commitPhase: 'check' } });
    const res = await t.api.post(`/api/v1/imports/${waiting}/commit`, acme.key);
    expect(res.statusCode).toBe(409);
    expect(res.json().error).toBe('import_commit_in_progress');
    await t.db.prisma.import.update({ where: { id: running }, data: { status: 'validated', commitPhase: null } });
  });

  it('an import started by a key revoked since commits with another key', async () => {
    const { key, id: keyId } = await acme.newKey();
    const id = (await startImport(t, key, 'assets', assetCsv('K-1,Revoked,trailer'))).json().importId;
    expect((await t.api.delete(`/api/v1/api-keys/${keyId}`, acme.key)).statusCode).toBe(200);
    expect((await t.api.post(`/api/v1/imports/${id}/commit`, key)).statusCode).toBe(401);
    expect((await t.api.post(`/api/v1/imports/${id}/commit`, acme.key)).statusCode).toBe(202);
    expect(await statusOf(id)).toBe('completed');
  });

  it('a rollback refuses when a record changed since, naming the row', async () => {
    const done = await importAndCommit(t, acme.key, 'assets', assetCsv('B-1,Before,trailer'));
    const asset = await t.db.prisma.asset.findFirstOrThrow({
      where: { orgId: acme.orgId, customerAssetNumber: 'B-1' },
    });
    await t.api.patch(`/api/v1/assets/${asset.id}`, acme.key, { nickname: 'After' });
    const res = await t.api.post(`/api/v1/imports/${done.id}/rollback`, acme.key);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ error: 'import_rows_changed', rows: [2] });
  });
});

describe('restart', () => {
  it('resumes a validation whose process stopped, and fails an upload cut short', async () => {
    const id = (await startImport(t, acme.key, 'assets', assetCsv('P-1,Resumed,trailer'))).json().importId;
    await t.db.prisma.import.update({
      where: { id },
      data: { status: 'validating', leaseOwner: 'gone', leaseUntil: new Date(Date.now() - 1000) },
    });
    await t.db.prisma.importRow.updateMany({ where: { importId: id }, data: { action: 'pending' } });
    expect(await t.deps.services.imports.tick()).toBeGreaterThanOrEqual(1);
    expect(await importOf(t, acme.key, id)).toMatchObject({ status: 'validated', counts: { create: 1 } });

    const cut = (await startImport(t, acme.key, 'assets', assetCsv('P-2,Cut,trailer'))).json().importId;
    await t.db.prisma.import.update({
      where: { id: cut },
      data: { status: 'validating', readComplete: false, leaseUntil: new Date(Date.now() - 1000) },
    });
    await t.deps.services.imports.tick();
    expect(await importOf(t, acme.key, cut)).toMatchObject({
      status: 'failed',
      failureReason: expect.stringMatching(/upload the file again/),
    });
  });

  it('resumes a commit whose process stopped and writes each row once', async () => {
    const id = (await startImport(t, acme.key, 'assets', assetCsv('Q-1,Resumed commit,trailer'))).json().importId;
    await t.db.prisma.import.update({
      where: { id },
      data: { status: 'committing', commitPhase: 'check', committedByKeyId: acme.keyId, leaseUntil: new Date(0) },
    });
    await t.deps.services.imports.tick();
    expect(await statusOf(id)).toBe('completed');
    expect(await t.db.prisma.asset.count({ where: { orgId: acme.orgId, customerAssetNumber: 'Q-1' } })).toBe(1);
  });
});

describe('saved mappings', () => {
  it('saves, lists and reuses a mapping; a name is taken once', async () => {
    const body = {
      name: 'Fleet sheet',
      type: 'assets',
      mapping: { 'Unit No': 'customerAssetNumber', Name: 'nickname' },
      options: { onError: 'skip_rows' },
    };
    const res = await t.api.post('/api/v1/imports/mappings', acme.key, body);
    expect(res.statusCode).toBe(201);
    expect((await t.api.post('/api/v1/imports/mappings', acme.key, body)).json().error).toBe('mapping_name_taken');
    const list = (await t.api.get('/api/v1/imports/mappings?type=assets', acme.key)).json();
    expect(list.mappings[0]).toMatchObject({ name: 'Fleet sheet', options: { onError: 'skip_rows' } });
    const id = (
      await startImport(t, acme.key, 'assets', 'Unit No,Name,Asset Class\nM-7,Mapped,trailer\nM-8,,trailer\n', {
        mappingId: res.json().mappingId,
      })
    ).json().importId;
    const imp = await importOf(t, acme.key, id);
    expect(imp).toMatchObject({
      status: 'validated',
      counts: { create: 1, error: 1 },
      options: { onError: 'skip_rows' },
    });
    expect((await t.api.post(`/api/v1/imports/${id}/commit`, acme.key)).statusCode).toBe(202);
    expect(await statusOf(id)).toBe('partially_completed');
  });
});
