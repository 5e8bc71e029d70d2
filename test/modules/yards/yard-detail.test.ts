import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { makeAsset, makeTool, makeYard } from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { toYardRow } from '../../../src/modules/yards/yards.schemas.ts';

let t: TestApp;
let acme: TestTenant;
let other: TestTenant;
beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  other = await t.tenant('Other');
});
afterAll(() => t.close());

/** The detail as the three Prisma reads answered it before the one statement: the yard, then each count. */
async function answerByPrisma(orgId: string, id: string): Promise<string> {
  const yard = await t.db.prisma.yard.findFirstOrThrow({ where: { id, orgId } });
  const assetCount = await t.db.prisma.asset.count({ where: { orgId, yardId: id } });
  const toolCount = await t.db.prisma.tool.count({ where: { orgId, assignedYardId: id } });
  return JSON.stringify({ ok: true, yard: { ...toYardRow(yard), assetCount, toolCount } });
}

describe('GET /yards/:id in one statement', () => {
  it('answers the same bytes as the per-field reads, in one round trip', async () => {
    const yardId = await makeYard(t, acme.key, {
      name: 'Dock "7" – Süd',
      lat: 51.507351,
      lng: -0.127758,
      address: 'Unit 4, "Quay" Rd\nLondon',
      notes: 'Gate code 1234 · ask for Ünal',
    });
    const elsewhere = await makeYard(t, acme.key, { name: 'Elsewhere' });
    const moved: string[] = [];
    for (let i = 0; i < 12; i++) moved.push(await makeAsset(t, acme.key, { nickname: `Unit ${i}`, yardId }));
    await makeAsset(t, acme.key, { nickname: 'Away', yardId: elsewhere });
    await makeAsset(t, acme.key, { nickname: 'Nowhere' });
    for (let i = 0; i < 3; i++) await makeTool(t, acme.key, { name: `Drill ${i}`, assignedYardId: yardId });
    await makeTool(t, acme.key, { name: 'Saw', assignedYardId: elsewhere });
    expect((await t.api.patch(`/api/v1/assets/${moved[0]}`, acme.key, { yardId: elsewhere })).statusCode).toBe(200);
    expect((await t.api.patch(`/api/v1/yards/${yardId}`, acme.key, { notes: 'Gate code 4321' })).statusCode).toBe(200);

    const original = t.db.sql.query;
    const statements: string[] = [];
    t.db.sql.query = ((text: string, ...rest: never[]) => {
      if (rest[1] !== 'auth_key_lookup') statements.push(text);
      return (original as (...a: unknown[]) => unknown).call(t.db.sql, text, ...rest);
    }) as typeof original;
    let body: string;
    try {
      const res = await t.api.get(`/api/v1/yards/${yardId}`, acme.key);
      expect(res.statusCode).toBe(200);
      body = res.body;
    } finally {
      t.db.sql.query = original;
    }
    expect(statements).toHaveLength(1);
    expect(body).toBe(await answerByPrisma(acme.orgId, yardId));
    expect(JSON.parse(body).yard).toMatchObject({ assetCount: 11, toolCount: 3, notes: 'Gate code 4321' });
    expect((await t.api.get(`/api/v1/yards/${elsewhere}`, acme.key)).body).toBe(
      await answerByPrisma(acme.orgId, elsewhere),
    );
  });

  it("answers an empty yard with zero counts, and another organisation's yard with 404", async () => {
    const empty = await makeYard(t, acme.key, { name: 'Empty' });
    expect((await t.api.get(`/api/v1/yards/${empty}`, acme.key)).body).toBe(await answerByPrisma(acme.orgId, empty));
    const foreign = await makeYard(t, other.key, { name: 'Foreign' });
    await makeAsset(t, other.key, { nickname: 'Theirs', yardId: foreign });
    const res = await t.api.get(`/api/v1/yards/${foreign}`, acme.key);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ ok: false, error: 'not_found' });
  });
});
