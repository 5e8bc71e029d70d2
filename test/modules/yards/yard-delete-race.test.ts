import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { onPostgres } from '../../helpers/db/test-database.ts';
import { holdWrite } from '../../helpers/app/hold-write.ts';

let t: TestApp;
let acme: TestTenant;
beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant();
});
afterAll(() => t.close());

describe('yard references are enforced by the database', () => {
  it('deleting a yard unassigns rows written without the service (foreign key ON DELETE SET NULL)', async () => {
    const yard = await t.db.prisma.yard.create({ data: { orgId: acme.orgId, name: 'North' } });
    const asset = await t.db.prisma.asset.create({
      data: {
        orgId: acme.orgId,
        nickname: 'A',
        assetClass: 'TRAILER',
        meterType: 'NONE',
        meterUnit: 'none',
        yardId: yard.id,
      },
    });
    await t.db.prisma.yard.delete({ where: { id: yard.id } });
    expect((await t.db.prisma.asset.findUniqueOrThrow({ where: { id: asset.id } })).yardId).toBeNull();
  });

  it.skipIf(!onPostgres)('an asset created into a yard being deleted gets 422, never a dangling yardId', async () => {
    const yard = await t.db.prisma.yard.create({ data: { orgId: acme.orgId, name: 'Doomed' } });
    // The delete is applied but not committed while the create passes its reference check and inserts.
    const held = await holdWrite(t, (tx) => tx.yard.delete({ where: { id: yard.id } }));
    const create = t.api.post('/api/v1/assets', acme.key, {
      nickname: 'Racer',
      assetClass: 'trailer',
      yardId: yard.id,
    });
    await held.release();
    const res = await create;
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({
      ok: false,
      error: 'validation_failed',
      fieldErrors: { yardId: expect.any(String) },
    });
    const dangling = await t.db.sql.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM assets a WHERE a."yardId" IS NOT NULL AND NOT EXISTS (SELECT 1 FROM yards y WHERE y.id = a."yardId")`,
    );
    expect(dangling[0].n).toBe(0);
  });
});
