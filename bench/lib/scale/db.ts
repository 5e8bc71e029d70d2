// bench/scale.ts's database: created and seeded once (minutes), then reused by every run until
// `npm run bench:scale -- --drop`. A small meta table records the seed version, the orgs and the API key.
import pg from 'pg';
import { openDatabase } from '../../../src/db/database.ts';
import { migrate } from '../../../src/db/migrator.ts';
import { createOrgAdmin } from '../../../src/modules/orgs/orgs.service.ts';
import { dropSecondaryIndexes } from '../bulk.ts';
import { DEFAULT_READINGS, seedOrganisation, seedVersion } from './seed.ts';

export interface ScaleDatabase {
  url: string;
  key: string;
  orgId: string;
  tag: string;
  userId: string;
}

const withClient = async <T>(url: string, fn: (c: pg.Client) => Promise<T>) => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
};

const dbUrl = (adminUrl: string, name: string) => {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
};

export async function dropScaleDatabase(adminUrl: string, name: string) {
  await withClient(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}

export async function ensureScaleDatabase(
  adminUrl: string,
  name: string,
  log: (m: string) => void,
  readings = DEFAULT_READINGS,
): Promise<ScaleDatabase> {
  const url = dbUrl(adminUrl, name);
  const version = seedVersion(readings);
  const exists = await withClient(
    adminUrl,
    async (c) => (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1,
  );
  if (exists) {
    const meta = await withClient(url, async (c) => {
      const t = await c.query(`SELECT to_regclass('bench_scale_meta') AS t`);
      if (!t.rows[0].t) return null;
      return (await c.query(`SELECT * FROM bench_scale_meta WHERE version = $1`, [version])).rows[0] ?? null;
    });
    if (meta) {
      // Migrations added since the seed (new indexes) apply to the seeded data.
      const db = await openDatabase({ databaseUrl: url, dataDir: 'unused' });
      await migrate(db.sql);
      await db.close();
      log(`reusing seeded database ${name}`);
      return { url, key: meta.key, orgId: meta.orgId, tag: meta.tag, userId: meta.userId };
    }
    log(`database ${name} is not a complete ${version} seed: recreating`);
    await dropScaleDatabase(adminUrl, name);
  }
  await withClient(adminUrl, (c) => c.query(`CREATE DATABASE "${name}"`));
  const started = performance.now();
  const db = await openDatabase({ databaseUrl: url, dataDir: 'unused' });
  await migrate(db.sql);
  const admin = createOrgAdmin(db);
  const orgs: { orgId: string; tag: string; userId: string; key: string; scale: number }[] = [];
  for (const [slug, scale] of [
    ['scale-a', 1],
    ['scale-b', 0.25],
  ] as const) {
    const org = await admin.createOrg(`Scale ${slug}`, slug);
    const user = await admin.createUser(slug, `${slug}@example.com`, 'Bench');
    const key = await admin.createKey({
      orgSlug: slug,
      userEmail: `${slug}@example.com`,
      label: 'bench',
      rateLimit: '100000000',
    });
    orgs.push({ orgId: org.id, tag: slug, userId: user.id, key: key.key, scale });
  }
  await db.close();
  await withClient(url, async (c) => {
    await c.query('SET synchronous_commit = off');
    await c.query(`SET maintenance_work_mem = '256MB'`);
    const rebuild = await dropSecondaryIndexes(c, 'meter_logs');
    for (const o of orgs) {
      log(`seeding ${o.tag} (scale ${o.scale})`);
      await seedOrganisation(c, { orgId: o.orgId, tag: o.tag }, o.userId, o.scale, log, readings);
    }
    const t = performance.now();
    await rebuild();
    log(`meter log indexes built in ${((performance.now() - t) / 1000).toFixed(0)} s`);
    log('VACUUM ANALYZE');
    await c.query('VACUUM ANALYZE');
    await c.query(`CREATE TABLE bench_scale_meta (version text, key text, "orgId" text, tag text, "userId" text)`);
    const a = orgs[0];
    await c.query(`INSERT INTO bench_scale_meta VALUES ($1, $2, $3, $4, $5)`, [
      version,
      a.key,
      a.orgId,
      a.tag,
      a.userId,
    ]);
  });
  log(`seeded in ${((performance.now() - started) / 60_000).toFixed(1)} min`);
  return { url, key: orgs[0].key, orgId: orgs[0].orgId, tag: orgs[0].tag, userId: orgs[0].userId };
}

/**
 * `n` small organisations, each with a key: the work-order benchmark's baseline (the same create with no number
 * lock shared between requests). New ones every run (a few rows each), so no key is reused across runs.
 */
export async function createSpreadOrgs(url: string, n: number): Promise<string[]> {
  const db = await openDatabase({ databaseUrl: url, dataDir: 'unused' });
  try {
    const admin = createOrgAdmin(db);
    const run = Date.now().toString(36);
    const keys: string[] = [];
    for (let i = 0; i < n; i++) {
      const slug = `spread-${run}-${i}`;
      await admin.createOrg(`Spread ${i}`, slug);
      await admin.createUser(slug, `${slug}@example.com`, 'Bench');
      const key = await admin.createKey({
        orgSlug: slug,
        userEmail: `${slug}@example.com`,
        label: 'bench',
        rateLimit: '100000000',
      });
      keys.push(key.key);
    }
    return keys;
  } finally {
    await db.close();
  }
}

/**
 * Removes what the write measurements added: the work orders numbered after `seqBefore` (the counter goes back, so
 * numbers stay 1..N), the events and meter logs written since `since`, and the spread organisations.
 */
export async function removeBenchWrites(
  pool: pg.Pool,
  orgId: string,
  seqBefore: number,
  since: Date,
  spreadOrgs: number,
): Promise<void> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    await c.query(`DELETE FROM work_orders WHERE "orgId" = $1 AND number > $2`, [orgId, seqBefore]);
    await c.query(`UPDATE organizations SET "workOrderSeq" = $2 WHERE id = $1`, [orgId, seqBefore]);
    await c.query(`DELETE FROM events WHERE "orgId" = $1 AND "createdAt" >= $2`, [orgId, since]);
    await c.query(`DELETE FROM meter_logs WHERE "orgId" = $1 AND "createdAt" >= $2`, [orgId, since]);
    const { rowCount } = await c.query(`DELETE FROM organizations WHERE slug LIKE 'spread-%'`);
    if ((rowCount ?? 0) < spreadOrgs)
      throw new Error(`expected ${spreadOrgs} spread organisations, removed ${rowCount}`);
    await c.query('COMMIT');
  } catch (err) {
    await c.query('ROLLBACK');
    throw err;
  } finally {
    c.release();
  }
}
