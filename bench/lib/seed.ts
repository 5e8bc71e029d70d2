// The organisations the benchmarks measure: a tenant with a key, and a fleet of assets under it.
import { openDatabase, type Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrator.ts';
import { createOrgAdmin } from '../../src/modules/orgs/orgs.service.ts';

export interface BenchTenant {
  orgId: string;
  userId: string;
  key: string;
}

/** An organisation, its one user and an API key with every scope (no per-key rate limit unless given). */
export async function createBenchTenant(
  db: Database,
  slug = 'bench',
  opts: { rateLimit?: string; name?: string } = {},
): Promise<BenchTenant> {
  const admin = createOrgAdmin(db);
  const org = await admin.createOrg(opts.name ?? `Bench ${slug}`, slug);
  const email = `${slug}@example.com`;
  const user = await admin.createUser(slug, email, 'Bench');
  const key = await admin.createKey({ orgSlug: slug, userEmail: email, label: 'bench', rateLimit: opts.rateLimit });
  return { orgId: org.id, userId: user.id, key: key.key };
}

/**
 * `count` API keys spread over `orgs` organisations, as an integration server holding many tenants' keys presents
 * them: the first organisation is `tenant`'s (its key first in the list), the others new ('bench-keys-<i>'), each
 * key with every scope and the per-key rate limit out of the way. Returns the keys, organisation by organisation.
 */
export async function createKeyRing(
  target: { databaseUrl?: string; dataDir: string },
  tenant: BenchTenant,
  count: number,
  orgs: number,
): Promise<{ all: string[]; ofTenant: string[] }> {
  const db = await openDatabase(target);
  try {
    const admin = createOrgAdmin(db);
    const perOrg = Math.ceil(count / orgs);
    const rings: string[][] = [];
    for (let o = 0; o < orgs && o * perOrg < count; o++) {
      const slug = o === 0 ? 'bench' : `bench-keys-${o}`;
      const ring = o === 0 ? [tenant.key] : [(await createBenchTenant(db, slug, { rateLimit: '100000000' })).key];
      const email = `${slug}@example.com`;
      while (ring.length < Math.min(perOrg, count - o * perOrg))
        ring.push(
          (
            await admin.createKey({
              orgSlug: slug,
              userEmail: email,
              label: `bench ${ring.length}`,
              rateLimit: '100000000',
            })
          ).key,
        );
      rings.push(ring);
    }
    // Interleaved: consecutive requests come from different organisations, as from a server relaying many tenants.
    const all = Array.from({ length: perOrg }, (_, i) =>
      rings.flatMap((ring) => (i < ring.length ? [ring[i]] : [])),
    ).flat();
    return { all, ofTenant: rings[0] };
  } finally {
    await db.close();
  }
}

/**
 * A migrated database with one tenant ('bench', key rate limit out of the way) and `assets` assets named
 * `bench-asset-<i>` (a third each on-road/odometer, off-road/hours, trailer/none; every other one with a VIN),
 * newest first, then ANALYZE. `target` is PostgreSQL (`databaseUrl`) or PGlite (`dataDir`).
 */
export async function seedFleet(target: { databaseUrl?: string; dataDir: string }, assets: number) {
  const db = await openDatabase(target);
  try {
    await migrate(db.sql);
    const tenant = await createBenchTenant(db, 'bench', { rateLimit: '100000000', name: 'Bench Fleet' });
    const classes = ['ON_ROAD', 'OFF_ROAD', 'TRAILER'] as const;
    await db.prisma.asset.createMany({
      data: Array.from({ length: assets }, (_, i) => ({
        id: `bench-asset-${i}`,
        orgId: tenant.orgId,
        nickname: `Unit ${i}`,
        assetClass: classes[i % 3],
        meterType: (['ODOMETER', 'HOURS', 'NONE'] as const)[i % 3],
        meterUnit: ['mi', 'hrs', 'none'][i % 3],
        vin: i % 2 ? `VIN${i}` : null,
        createdAt: new Date(Date.now() - i * 1000),
      })),
    });
    await db.sql.exec('ANALYZE');
    return tenant;
  } finally {
    await db.close();
  }
}
