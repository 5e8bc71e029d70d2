import pg from 'pg';
import { openDatabase } from './src/db/database.ts';
import { migrate } from './src/db/migrator.ts';
import { ListAssetsResponse, ASSET_ROW_SELECT, toAssetRow } from './src/modules/assets/assets.schemas.ts';
const admin = new pg.Client({ connectionString: 'postgresql://postgres@127.0.0.1:5432/postgres' }); await admin.connect();
await admin.query('DROP DATABASE IF EXISTS prof_tmp WITH (FORCE)'); await admin.query('CREATE DATABASE prof_tmp'); await admin.end();
const url = 'postgresql://postgres@127.0.0.1:5432/prof_tmp';
const db = await openDatabase({ databaseUrl: url, dataDir: 'x' }); await migrate(db.sql);
const org = await db.prisma.organization.create({ data: { name: 'o', slug: 'o' } });
await db.prisma.asset.createMany({ data: Array.from({ length: 1000 }, (_, i) => ({ orgId: org.id, nickname: `U${i}`, assetClass: 'TRAILER' as const, meterType: 'NONE' as const, meterUnit: 'none', createdAt: new Date(Date.now() - i * 1000) })) });
const pool = new pg.Pool({ connectionString: url });
async function time(name: string, fn: () => unknown, n = 500) {
  for (let i = 0; i < 50; i++) await fn();
  const t = performance.now(); for (let i = 0; i < n; i++) await fn();
  console.log(name.padEnd(34), ((performance.now() - t) / n * 1000).toFixed(0), 'µs/op');
}
const q = () => db.prisma.asset.findMany({ where: { orgId: org.id }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: 51, select: ASSET_ROW_SELECT });
await time('prisma findMany 51', q);
await time('raw pg 51', () => pool.query(`SELECT id, nickname, "customerAssetNumber", "assetClass", vin, serial, "meterType", "meterUnit", "lifecycleStatus", "yardId", "createdAt", "updatedAt" FROM assets WHERE "orgId" = $1 ORDER BY "createdAt" DESC, id DESC LIMIT 51`, [org.id]));
await time('prisma $queryRawUnsafe 51', () => db.prisma.$queryRawUnsafe(`SELECT id, nickname, "customerAssetNumber", "assetClass", vin, serial, "meterType", "meterUnit", "lifecycleStatus", "yardId", "createdAt", "updatedAt" FROM assets WHERE "orgId" = $1 ORDER BY "createdAt" DESC, id DESC LIMIT 51`, org.id));
const rows = await q();
const body = { ok: true, assets: rows.slice(0, 50).map(toAssetRow), nextCursor: 'abc' };
await time('toAssetRow x50', () => rows.slice(0, 50).map(toAssetRow), 5000);
await time('zod parse 50 rows', () => ListAssetsResponse.safeParse(body), 5000);
await time('JSON.stringify 50 rows', () => JSON.stringify(body), 5000);
await db.close(); await pool.end();
