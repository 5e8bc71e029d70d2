import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { makeProject } from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { securitySuite } from '../../helpers/app/security-suite.ts';
import { holdWrite } from '../../helpers/app/hold-write.ts';

let t: TestApp;
let acme: TestTenant;
let other: TestTenant;
let foreignProjectId: string;

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  other = await t.tenant('Other');
  foreignProjectId = await makeProject(t, other.key, { name: 'Theirs', code: 'SHARED-1' });
});
afterAll(() => t.close());

const create = (body: unknown, key = acme.key) => t.api.post('/api/v1/projects', key, body);
const detail = async (id: string, key = acme.key) => (await t.api.get(`/api/v1/projects/${id}`, key)).json().project;

describe('POST /projects', () => {
  it('creates with status ACTIVE by default and returns 201 {ok, projectId}', async () => {
    const res = await create({
      name: '  Highway 9 widening ',
      code: ' HW9 ',
      customerName: 'County Roads',
      startDate: '2026-03-01',
      endDate: '2026-10-31T00:00:00Z',
      hourlyRate: 145.5,
      notes: 'Night shifts',
    });
    expect(res.statusCode).toBe(201);
    const { ok, projectId } = res.json();
    expect(ok).toBe(true);
    expect(await detail(projectId)).toMatchObject({
      id: projectId,
      name: 'Highway 9 widening',
      code: 'HW9',
      customerName: 'County Roads',
      status: 'ACTIVE',
      startDate: '2026-03-01T00:00:00.000Z',
      endDate: '2026-10-31T00:00:00.000Z',
      hourlyRate: 145.5,
      notes: 'Night shifts',
    });
  });

  it('allows the same code in another organisation and any number of projects without a code', async () => {
    expect((await create({ name: 'Ours', code: 'SHARED-1' })).statusCode).toBe(201);
    expect((await create({ name: 'No code 1', code: null })).statusCode).toBe(201);
    const blank = await create({ name: 'No code 2', code: '   ' });
    expect(blank.statusCode).toBe(201);
    expect((await detail(blank.json().projectId)).code).toBeNull();
  });

  it('rejects a duplicate code in the organisation with 422', async () => {
    await create({ name: 'First', code: 'DUP-1' });
    const res = await create({ name: 'Second', code: 'DUP-1' });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({
      ok: false,
      error: 'validation_failed',
      fieldErrors: { code: 'a project with this code already exists' },
    });
    expect(res.json().message).toContain('already exists');
    expect(await t.db.prisma.project.count({ where: { orgId: acme.orgId, code: 'DUP-1' } })).toBe(1);
  });

  it('lets exactly one of several concurrent creates with the same code win', async () => {
    const results = await Promise.all(
      Array.from({ length: 4 }, (_, i) => create({ name: `Racer ${i}`, code: 'RACE-1' })),
    );
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 422, 422, 422]);
    expect(await t.db.prisma.project.count({ where: { orgId: acme.orgId, code: 'RACE-1' } })).toBe(1);
  });

  it('answers 422 when an uncommitted create holds the code (the unique index decides, not the pre-check)', async () => {
    const held = await holdWrite(t, (tx) =>
      tx.project.create({ data: { orgId: acme.orgId, name: 'Holder', code: 'HELD-C' } }),
    );
    const pending = create({ name: 'Late', code: 'HELD-C' });
    await held.release();
    const res = await pending;
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors).toEqual({ code: 'a project with this code already exists' });
  });

  it.each([
    ['a missing name', { code: 'X1' }, 'name'],
    ['a blank name', { name: '  ' }, 'name'],
    ['a negative hourlyRate', { name: 'P', hourlyRate: -0.01 }, 'hourlyRate'],
    ['an hourlyRate above 10000', { name: 'P', hourlyRate: 10000.01 }, 'hourlyRate'],
    ['an hourlyRate that is not a number', { name: 'P', hourlyRate: '50' }, 'hourlyRate'],
    ['an unknown status', { name: 'P', status: 'PAUSED' }, 'status'],
    ['an end before the start', { name: 'P', startDate: '2026-05-01', endDate: '2026-04-01' }, 'endDate'],
  ])('answers 422 for %s', async (_name, body, field) => {
    const res = await create(body);
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors).toHaveProperty(field);
  });

  it('accepts the hourlyRate bounds 0 and 10000', async () => {
    expect((await create({ name: 'Free', hourlyRate: 0 })).statusCode).toBe(201);
    expect((await create({ name: 'Premium', hourlyRate: 10000 })).statusCode).toBe(201);
  });
});

describe('POST /projects/batch', () => {
  it('reports each entry; a duplicate code fails only its entry, with fieldErrors and formError', async () => {
    await create({ name: 'Existing', code: 'B-EXIST' });
    const res = await t.api.post('/api/v1/projects/batch', acme.key, {
      entries: [
        { name: 'Batch A', code: 'B-1' },
        { name: 'Batch B', code: 'B-EXIST' },
        { name: 'Batch C', code: 'B-1' },
        { code: 'B-3' },
        { name: 'Batch E', hourlyRate: 20000 },
        { name: 'Batch F' },
        'not an object',
      ],
    });
    expect(res.statusCode).toBe(200);
    const { results, summary } = res.json();
    expect(summary).toEqual({ received: 7, succeeded: 2, failed: 5 });
    expect(results.map((r: { index: number; ok: boolean }) => [r.index, r.ok])).toEqual([
      [0, true],
      [1, false],
      [2, false],
      [3, false],
      [4, false],
      [5, true],
      [6, false],
    ]);
    expect(results[6]).toMatchObject({ error: 'validation_failed', fieldErrors: { body: expect.any(String) } });
    expect(results[6].formError).toMatch(/^The project could not be created: the entry: /);
    for (const i of [1, 2]) {
      expect(results[i]).toMatchObject({
        ok: false,
        error: 'validation_failed',
        fieldErrors: { code: 'a project with this code already exists' },
      });
      expect(results[i].formError).toMatch(/already exists/);
    }
    expect(results[3]).toMatchObject({ error: 'validation_failed', fieldErrors: { name: 'is required' } });
    expect(results[3].formError).toMatch(/name is required/);
    expect(results[4].fieldErrors).toHaveProperty('hourlyRate');
    expect(typeof results[4].formError).toBe('string');
    const stored = await t.db.prisma.project.findUnique({ where: { id: results[0].projectId } });
    expect(stored).toMatchObject({ orgId: acme.orgId, code: 'B-1', name: 'Batch A' });
    expect(await t.db.prisma.project.count({ where: { orgId: acme.orgId, code: 'B-1' } })).toBe(1);
  });

  it('accepts a bare array of exactly 50 entries', async () => {
    const res = await t.api.post(
      '/api/v1/projects/batch',
      acme.key,
      Array.from({ length: 50 }, (_, i) => ({ name: `Fifty ${i}`, code: `F-${i}` })),
    );
    expect(res.json().summary).toEqual({ received: 50, succeeded: 50, failed: 0 });
  });

  it.each([
    ['invalid_envelope', { items: [] }],
    ['invalid_envelope', '"nope"'],
    ['empty_batch', []],
    ['empty_batch', { entries: [] }],
    ['batch_too_large', Array.from({ length: 51 }, (_, i) => ({ name: `N${i}` }))],
  ])('answers 400 %s and writes nothing', async (code, body) => {
    const before = await t.db.prisma.project.count();
    const res = await t.api.post('/api/v1/projects/batch', acme.key, body);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ ok: false, error: code });
    expect(await t.db.prisma.project.count()).toBe(before);
  });
});

describe('GET /projects', () => {
  let lister: TestTenant;
  beforeAll(async () => {
    lister = await t.tenant('Lister');
    // Explicit, distinct creation times: the order under test must not depend on clock resolution.
    const rows = [
      ['A1', 'ACTIVE'],
      ['H1', 'ON_HOLD'],
      ['C1', 'COMPLETED'],
      ['A2', 'ACTIVE'],
      ['X1', 'ARCHIVED'],
      ['A3', 'ACTIVE'],
    ] as const;
    for (const [i, [name, status]] of rows.entries()) {
      await t.db.prisma.project.create({
        data: { orgId: lister.orgId, name, status, createdAt: new Date(Date.UTC(2026, 0, 1 + i)) },
      });
    }
  });
  const names = async (query: string) =>
    (await t.api.get(`/api/v1/projects${query}`, lister.key)).json().projects.map((p: { name: string }) => p.name);

  it('lists ACTIVE projects newest first by default', async () => {
    expect(await names('')).toEqual(['A3', 'A2', 'A1']);
  });

  it('filters by a status CSV and ignores unknown values', async () => {
    expect(await names('?status=COMPLETED,on_hold')).toEqual(['C1', 'H1']);
    expect(await names('?status=ARCHIVED,BOGUS')).toEqual(['X1']);
    expect(await names('?status=BOGUS')).toEqual(['A3', 'A2', 'A1']);
  });

  it('pages with cursors and stays in the organisation', async () => {
    const first = (
      await t.api.get('/api/v1/projects?status=ACTIVE,ON_HOLD,COMPLETED,ARCHIVED&limit=4', lister.key)
    ).json();
    expect(first.projects).toHaveLength(4);
    const second = (
      await t.api.get(
        `/api/v1/projects?status=ACTIVE,ON_HOLD,COMPLETED,ARCHIVED&limit=4&cursor=${first.nextCursor}`,
        lister.key,
      )
    ).json();
    expect(second.nextCursor).toBeNull();
    expect([...first.projects, ...second.projects].map((p: { name: string }) => p.name)).toEqual([
      'A3',
      'X1',
      'A2',
      'C1',
      'H1',
      'A1',
    ]);
    expect((await t.api.get('/api/v1/projects?cursor=garbage', lister.key)).statusCode).toBe(422);
  });
});

describe('PATCH /projects/:id', () => {
  let projectId: string;
  beforeAll(async () => {
    projectId = await makeProject(t, acme.key, { name: 'Patchable', code: 'P-1', hourlyRate: 80 });
    await makeProject(t, acme.key, { name: 'Code holder', code: 'P-TAKEN' });
  });

  it('updates fields and clears with null', async () => {
    const res = await t.api.patch(`/api/v1/projects/${projectId}`, acme.key, {
      status: 'ON_HOLD',
      hourlyRate: null,
      customerName: 'ACME',
      code: 'P-1',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true, projectId });
    expect(await detail(projectId)).toMatchObject({
      status: 'ON_HOLD',
      hourlyRate: null,
      customerName: 'ACME',
      code: 'P-1',
    });
  });

  it('answers 400 duplicate_code when the code belongs to another project', async () => {
    const res = await t.api.patch(`/api/v1/projects/${projectId}`, acme.key, { code: 'P-TAKEN', name: 'Renamed' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ ok: false, error: 'duplicate_code' });
    expect(res.json().message).toMatch(/a project with code "P-TAKEN" already exists/i);
    expect(await detail(projectId)).toMatchObject({ code: 'P-1', name: 'Patchable' });
  });

  it('does not clash with a project of another organisation', async () => {
    const res = await t.api.patch(`/api/v1/projects/${projectId}`, acme.key, { code: 'SHARED-2' });
    await t.api.patch(`/api/v1/projects/${foreignProjectId}`, other.key, { code: 'SHARED-2' });
    expect(res.statusCode).toBe(200);
    expect((await detail(foreignProjectId, other.key)).code).toBe('SHARED-2');
  });

  it('lets only one of two concurrent PATCHes take the same code', async () => {
    const a = await makeProject(t, acme.key, { name: 'Left' });
    const b = await makeProject(t, acme.key, { name: 'Right' });
    const results = await Promise.all(
      [a, b].map((id) => t.api.patch(`/api/v1/projects/${id}`, acme.key, { code: 'P-RACE' })),
    );
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 400]);
    expect(results.find((r) => r.statusCode === 400)?.json().error).toBe('duplicate_code');
    expect(await t.db.prisma.project.count({ where: { orgId: acme.orgId, code: 'P-RACE' } })).toBe(1);
  });

  it('answers 400 when an uncommitted write holds the code (unique violation mapped, not a 500)', async () => {
    const holder = await makeProject(t, acme.key, { name: 'Slow holder' });
    const held = await holdWrite(t, (tx) => tx.project.update({ where: { id: holder }, data: { code: 'P-HELD' } }));
    const pending = t.api.patch(`/api/v1/projects/${projectId}`, acme.key, { code: 'P-HELD' });
    await held.release();
    const res = await pending;
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ ok: false, error: 'duplicate_code' });
  });

  it.each([
    ['an empty body', {}, 'body'],
    ['a name of null', { name: null }, 'name'],
    ['an hourlyRate out of range', { hourlyRate: 10001 }, 'hourlyRate'],
    ['an end before the stored start', { startDate: '2026-06-01', endDate: '2026-05-01' }, 'endDate'],
  ])('answers 422 for %s', async (_name, body, field) => {
    const res = await t.api.patch(`/api/v1/projects/${projectId}`, acme.key, body);
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors).toHaveProperty(field);
  });

  it('checks the end date against the stored start date', async () => {
    await t.api.patch(`/api/v1/projects/${projectId}`, acme.key, { startDate: '2026-06-01' });
    const res = await t.api.patch(`/api/v1/projects/${projectId}`, acme.key, { endDate: '2026-05-01' });
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors).toEqual({ endDate: 'cannot be before startDate' });
  });
});

describe('GET /projects/:id', () => {
  it('is 404 for an unknown id', async () => {
    const res = await t.api.get('/api/v1/projects/nope', acme.key);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ ok: false, error: 'not_found' });
  });
});

securitySuite('projects', () => ({ t, tenant: acme }), [
  { label: 'GET /projects', method: 'GET', path: () => '/api/v1/projects', scope: 'projects:read' },
  {
    label: 'POST /projects',
    method: 'POST',
    path: () => '/api/v1/projects',
    scope: 'projects:write',
    body: { name: 'x' },
  },
  {
    label: 'POST /projects/batch',
    method: 'POST',
    path: () => '/api/v1/projects/batch',
    scope: 'projects:write',
    body: [{ name: 'x' }],
  },
  {
    label: 'GET /projects/:id',
    method: 'GET',
    path: () => `/api/v1/projects/${foreignProjectId}`,
    scope: 'projects:read',
    crossTenant: true,
  },
  {
    label: 'PATCH /projects/:id',
    method: 'PATCH',
    path: () => `/api/v1/projects/${foreignProjectId}`,
    scope: 'projects:write',
    body: { name: 'Stolen' },
    crossTenant: true,
  },
  {
    label: 'GET /projects/:id/equipment-usage',
    method: 'GET',
    path: () => `/api/v1/projects/${foreignProjectId}/equipment-usage`,
    scope: 'projects:read',
    crossTenant: true,
  },
]);
