import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { makeAsset, makeYard } from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { securitySuite } from '../../helpers/app/security-suite.ts';
import { holdWrite } from '../../helpers/app/hold-write.ts';

let t: TestApp;
let acme: TestTenant;
let other: TestTenant;
let foreignYardId: string;

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  other = await t.tenant('Other');
  foreignYardId = await makeYard(t, other.key, { name: 'North depot', lat: 51.5, lng: -0.12 });
});
afterAll(() => t.close());

const create = (body: unknown, key = acme.key) => t.api.post('/api/v1/yards', key, body);
const detail = async (id: string, key = acme.key) => (await t.api.get(`/api/v1/yards/${id}`, key)).json().yard;
const newTool = (yardId: string | null, orgId = acme.orgId) =>
  t.db.prisma.tool.create({
    data: { orgId, name: `Tool ${randomUUID().slice(0, 6)}`, scanToken: randomUUID(), assignedYardId: yardId },
  });

describe('POST /yards', () => {
  it('creates a yard and answers 201 {ok, yardId, createdAt}', async () => {
    const res = await create({
      name: ' South yard ',
      lat: -33.86,
      lng: 151.2,
      address: '1 Quay St',
      notes: 'Gate code 1234',
    });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({ ok: true, yardId: expect.any(String), createdAt: expect.any(String) });
    expect(await detail(body.yardId)).toMatchObject({
      id: body.yardId,
      name: 'South yard',
      lat: -33.86,
      lng: 151.2,
      address: '1 Quay St',
      notes: 'Gate code 1234',
      assetCount: 0,
      toolCount: 0,
      createdAt: body.createdAt,
    });
  });

  it('allows a yard without coordinates, and a name used by another organisation', async () => {
    const res = await create({ name: 'North depot' });
    expect(res.statusCode).toBe(201);
    expect(await detail(res.json().yardId)).toMatchObject({ lat: null, lng: null });
  });

  it('rejects a name already used in the organisation with 422', async () => {
    await create({ name: 'Dup yard' });
    const res = await create({ name: 'Dup yard', lat: 1, lng: 1 });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({
      ok: false,
      error: 'validation_failed',
      fieldErrors: { name: 'a yard with this name already exists' },
    });
  });

  it('lets exactly one of several concurrent creates with the same name win', async () => {
    const results = await Promise.all(Array.from({ length: 4 }, () => create({ name: 'Race yard' })));
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 422, 422, 422]);
    expect(await t.db.prisma.yard.count({ where: { orgId: acme.orgId, name: 'Race yard' } })).toBe(1);
  });

  it('answers 422 when an uncommitted create holds the name', async () => {
    const held = await holdWrite(t, (tx) => tx.yard.create({ data: { orgId: acme.orgId, name: 'Held yard' } }));
    const pending = create({ name: 'Held yard' });
    await held.release();
    expect((await pending).statusCode).toBe(422);
  });

  it.each([
    ['a missing name', { lat: 1, lng: 1 }, 'name'],
    ['a latitude above 90', { name: 'Y', lat: 90.5, lng: 0 }, 'lat'],
    ['a latitude below -90', { name: 'Y', lat: -91, lng: 0 }, 'lat'],
    ['a longitude above 180', { name: 'Y', lat: 0, lng: 180.01 }, 'lng'],
    ['a longitude below -180', { name: 'Y', lat: 0, lng: -181 }, 'lng'],
    ['a latitude without longitude', { name: 'Y', lat: 10 }, 'lng'],
    ['coordinates as strings', { name: 'Y', lat: '10', lng: '10' }, 'lat'],
  ])('answers 422 for %s', async (_name, body, field) => {
    const res = await create(body);
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors).toHaveProperty(field);
  });

  it('accepts the coordinate bounds', async () => {
    expect((await create({ name: 'Corner 1', lat: 90, lng: 180 })).statusCode).toBe(201);
    expect((await create({ name: 'Corner 2', lat: -90, lng: -180 })).statusCode).toBe(201);
  });
});

describe('POST /yards/batch', () => {
  it('reports each entry; duplicates (stored or earlier in the batch) fail only their entry', async () => {
    await create({ name: 'Batch existing' });
    const res = await t.api.post('/api/v1/yards/batch', acme.key, [
      { name: 'Batch 1', lat: 10, lng: 20 },
      { name: 'Batch existing' },
      { name: 'Batch 1' },
      { name: 'Batch 4', lat: 100, lng: 0 },
      { name: 'Batch 5' },
    ]);
    expect(res.statusCode).toBe(200);
    const { results, summary } = res.json();
    expect(summary).toEqual({ received: 5, succeeded: 2, failed: 3 });
    expect(results[0]).toEqual({ index: 0, ok: true, yardId: expect.any(String), createdAt: expect.any(String) });
    for (const i of [1, 2])
      expect(results[i]).toEqual({
        index: i,
        ok: false,
        error: 'validation_failed',
        fieldErrors: { name: 'a yard with this name already exists' },
      });
    expect(results[3]).toMatchObject({ index: 3, ok: false, error: 'validation_failed' });
    expect(results[3].fieldErrors).toHaveProperty('lat');
    expect(results[4]).toMatchObject({ index: 4, ok: true });
    expect(await t.db.prisma.yard.count({ where: { orgId: acme.orgId, name: 'Batch 1' } })).toBe(1);
  });

  it('accepts {entries} of exactly 50', async () => {
    const res = await t.api.post('/api/v1/yards/batch', acme.key, {
      entries: Array.from({ length: 50 }, (_, i) => ({ name: `Fifty ${i}` })),
    });
    expect(res.json().summary).toEqual({ received: 50, succeeded: 50, failed: 0 });
  });

  it.each([
    ['invalid_envelope', { yards: [] }],
    ['empty_batch', []],
    ['batch_too_large', Array.from({ length: 51 }, (_, i) => ({ name: `Over ${i}` }))],
  ])('answers 400 %s and writes nothing', async (code, body) => {
    const before = await t.db.prisma.yard.count();
    const res = await t.api.post('/api/v1/yards/batch', acme.key, body);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ ok: false, error: code });
    expect(await t.db.prisma.yard.count()).toBe(before);
  });
});

describe('GET /yards', () => {
  it('lists the organisation yards by name and pages with cursors', async () => {
    const lister = await t.tenant('Lister');
    await t.api.post(
      '/api/v1/yards/batch',
      lister.key,
      ['Delta', 'Alpha', 'Charlie', 'Bravo', 'Echo'].map((name) => ({ name })),
    );
    const first = (await t.api.get('/api/v1/yards?limit=3', lister.key)).json();
    const second = (await t.api.get(`/api/v1/yards?limit=3&cursor=${first.nextCursor}`, lister.key)).json();
    expect(second.nextCursor).toBeNull();
    const names = [...first.yards, ...second.yards].map((y: { name: string }) => y.name);
    expect(names).toEqual(['Alpha', 'Bravo', 'Charlie', 'Delta', 'Echo']);
    expect((await t.api.get('/api/v1/yards?cursor=bad', lister.key)).statusCode).toBe(422);
  });
});

describe('GET /yards/:id', () => {
  it('counts the assets and tools at the yard', async () => {
    const yardId = await makeYard(t, acme.key, { name: 'Counted' });
    const elsewhere = await makeYard(t, acme.key, { name: 'Elsewhere' });
    for (const nickname of ['Truck 1', 'Truck 2'])
      await makeAsset(t, acme.key, { nickname, assetClass: 'on-road', yardId });
    await makeAsset(t, acme.key, { nickname: 'Truck 3', assetClass: 'on-road', yardId: elsewhere });
    await newTool(yardId);
    await newTool(elsewhere);
    expect(await detail(yardId)).toMatchObject({ name: 'Counted', assetCount: 2, toolCount: 1 });
  });

  it('is 404 for an unknown id', async () => {
    expect((await t.api.get('/api/v1/yards/unknown', acme.key)).statusCode).toBe(404);
  });
});

describe('PATCH /yards/:id', () => {
  let yardId: string;
  beforeAll(async () => {
    yardId = await makeYard(t, acme.key, { name: 'Patch me', lat: 10, lng: 10 });
    await create({ name: 'Taken name' });
  });

  it('updates fields, keeps its own name, and clears coordinates together', async () => {
    const res = await t.api.patch(`/api/v1/yards/${yardId}`, acme.key, {
      name: 'Patch me',
      lat: 11.5,
      address: 'Dock 4',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true, yardId });
    expect(await detail(yardId)).toMatchObject({ lat: 11.5, lng: 10, address: 'Dock 4' });
    expect((await t.api.patch(`/api/v1/yards/${yardId}`, acme.key, { lat: null, lng: null })).statusCode).toBe(200);
    expect(await detail(yardId)).toMatchObject({ lat: null, lng: null });
  });

  it('answers 422 for a name used by another yard, also when the clash is uncommitted', async () => {
    const res = await t.api.patch(`/api/v1/yards/${yardId}`, acme.key, { name: 'Taken name' });
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors).toEqual({ name: 'a yard with this name already exists' });
    const held = await holdWrite(t, (tx) => tx.yard.create({ data: { orgId: acme.orgId, name: 'Held rename' } }));
    const pending = t.api.patch(`/api/v1/yards/${yardId}`, acme.key, { name: 'Held rename' });
    await held.release();
    expect((await pending).statusCode).toBe(422);
    expect((await detail(yardId)).name).toBe('Patch me');
  });

  it.each([
    ['an empty body', {}, 'body'],
    ['a blank name', { name: ' ' }, 'name'],
    ['a latitude out of range', { lat: 95, lng: 0 }, 'lat'],
    ['one coordinate while the other is unset', { lat: 5 }, 'lng'],
  ])('answers 422 for %s', async (_name, body, field) => {
    const res = await t.api.patch(`/api/v1/yards/${yardId}`, acme.key, body);
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors).toHaveProperty(field);
  });
});

describe('DELETE /yards/:id', () => {
  it('unassigns the assets and tools of the yard (no cascade) and leaves others alone', async () => {
    const yardId = await makeYard(t, acme.key, { name: 'Closing' });
    const keep = await makeYard(t, acme.key, { name: 'Staying' });
    const assetAt = await makeAsset(t, acme.key, { nickname: 'At closing', assetClass: 'trailer', yardId });
    const assetKept = await makeAsset(t, acme.key, { nickname: 'At staying', assetClass: 'trailer', yardId: keep });
    const toolAt = await newTool(yardId);
    const toolKept = await newTool(keep);

    const res = await t.api.delete(`/api/v1/yards/${yardId}`, acme.key);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true, yardId, unassignedAssets: 1, unassignedTools: 1 });

    expect(await t.db.prisma.yard.findUnique({ where: { id: yardId } })).toBeNull();
    expect((await t.db.prisma.asset.findUnique({ where: { id: assetAt } }))?.yardId).toBeNull();
    expect((await t.db.prisma.tool.findUnique({ where: { id: toolAt.id } }))?.assignedYardId).toBeNull();
    expect((await t.db.prisma.asset.findUnique({ where: { id: assetKept } }))?.yardId).toBe(keep);
    expect((await t.db.prisma.tool.findUnique({ where: { id: toolKept.id } }))?.assignedYardId).toBe(keep);

    expect((await t.api.get(`/api/v1/yards/${yardId}`, acme.key)).statusCode).toBe(404);
    expect((await t.api.delete(`/api/v1/yards/${yardId}`, acme.key)).statusCode).toBe(404);
  });

  it('answers one 200 and one 404 to two concurrent deletes', async () => {
    const yardId = await makeYard(t, acme.key, { name: 'Double delete' });
    const results = await Promise.all([1, 2].map(() => t.api.delete(`/api/v1/yards/${yardId}`, acme.key)));
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 404]);
  });

  it('does not touch rows of another organisation', async () => {
    const foreignTool = await newTool(foreignYardId, other.orgId);
    const res = await t.api.delete(`/api/v1/yards/${foreignYardId}`, acme.key);
    expect(res.statusCode).toBe(404);
    expect((await t.db.prisma.tool.findUnique({ where: { id: foreignTool.id } }))?.assignedYardId).toBe(foreignYardId);
  });
});

securitySuite('yards', () => ({ t, tenant: acme }), [
  { label: 'GET /yards', method: 'GET', path: () => '/api/v1/yards', scope: 'yards:read' },
  { label: 'POST /yards', method: 'POST', path: () => '/api/v1/yards', scope: 'yards:write', body: { name: 'x' } },
  {
    label: 'POST /yards/batch',
    method: 'POST',
    path: () => '/api/v1/yards/batch',
    scope: 'yards:write',
    body: [{ name: 'x' }],
  },
  {
    label: 'GET /yards/:id',
    method: 'GET',
    path: () => `/api/v1/yards/${foreignYardId}`,
    scope: 'yards:read',
    crossTenant: true,
  },
  {
    label: 'PATCH /yards/:id',
    method: 'PATCH',
    path: () => `/api/v1/yards/${foreignYardId}`,
    scope: 'yards:write',
    body: { name: 'Stolen' },
    crossTenant: true,
  },
  {
    label: 'DELETE /yards/:id',
    method: 'DELETE',
    path: () => `/api/v1/yards/${foreignYardId}`,
    scope: 'yards:write',
    crossTenant: true,
  },
]);
