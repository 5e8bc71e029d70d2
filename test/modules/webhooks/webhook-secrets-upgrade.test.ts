import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, readMigrations } from '../../../src/db/migrator.ts';
import { signEnvelope } from '../../../src/delivery/signer.ts';
import { JOBS } from '../../../src/jobs/jobs.ts';
import { createUnmigratedDatabase, onPostgres, type TestDatabase } from '../../helpers/db/test-database.ts';
import { createTenant, type TestTenant } from '../../helpers/app/tenants.ts';
import { appOn, loadPublishedVerifier, startReceiver, type Receiver } from '../../helpers/delivery/harness.ts';

/** The migration that adds the ciphertext columns: the database is left just before it, as 8ba511f left it. */
const ENCRYPTION = '20261126110000_webhook_secret_ciphertext';
const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

let db: TestDatabase;
let receiver: Receiver;
let tenant: TestTenant;
let app: Awaited<ReturnType<typeof appOn>>;
let verifyWebhook: Awaited<ReturnType<typeof loadPublishedVerifier>>['verifyWebhook'];
const old = {
  plain: newSecret(),
  current: newSecret(),
  replaced: newSecret(),
  expired: newSecret(),
  gone: newSecret(),
};
const ids = { plain: randomUUID(), rotated: randomUUID(), expired: randomUUID() };

/** A subscription row as the previous release wrote it (its createWebhook / rotateSecret), through raw SQL. */
async function insertOld(id: string, path: string, secret: string, previous: string | null, expiresInSec: number) {
  await db.sql.query(
    `INSERT INTO webhook_subscriptions (id, "orgId", url, events, secret, "previousSecret", "previousSecretExpiresAt")
     VALUES ($1, $2, $3, ARRAY['asset.created'], $4, $5, CASE WHEN $5::text IS NULL THEN NULL ELSE now() + make_interval(secs => $6) END)`,
    [id, tenant?.orgId ?? 'org-upgraded', `${receiver.origin}${path}`, secret, previous, expiresInSec],
  );
}

beforeAll(async () => {
  receiver = await startReceiver();
  ({ verifyWebhook } = await loadPublishedVerifier());
  db = await createUnmigratedDatabase();
  await migrate(
    db.sql,
    readMigrations().filter((m) => m.name < ENCRYPTION),
  );
  // The organisation in raw SQL too: this release's code writes columns the old schema lacks.
  await db.sql.exec(`INSERT INTO organizations (id, name, slug) VALUES ('org-upgraded', 'Upgraded', 'upgraded')`);
  await insertOld(ids.plain, '/plain', old.plain, null, 0);
  await insertOld(ids.rotated, '/rotated', old.current, old.replaced, 3600);
  await insertOld(ids.expired, '/expired', old.expired, old.gone, -60);
  await migrate(db.sql); // the new release's migrations
  tenant = await createTenant(db, 'Upgraded Fleet');
  await db.sql.query(`UPDATE webhook_subscriptions SET "orgId" = $1 WHERE "orgId" = 'org-upgraded'`, [tenant.orgId]);
  app = await appOn(db, { WEBHOOK_CA_FILE: receiver.caFile });
});
afterAll(async () => {
  await app?.close();
  await db?.close();
  await receiver?.close();
});

const rows = () =>
  db.sql.query<Record<string, string | null>>(
    `SELECT id, secret, "previousSecret", "secretCiphertext", "previousSecretCiphertext" FROM webhook_subscriptions ORDER BY id`,
  );
const live = async (id: string, at = new Date()) => {
  const [row] = await db.prisma.webhookSubscription.findMany({ where: { id } });
  return app.deps.secretBox.liveSecrets(id, row, at);
};
/** One asset.created, dispatched: returns what each subscription's receiver got. */
async function deliverRound() {
  const before = receiver.requests.length;
  const made = await app.api.post('/api/v1/assets', tenant.key, {
    nickname: `A ${randomUUID()}`,
    assetClass: 'trailer',
  });
  expect(made.statusCode).toBe(201);
  await app.deps.delivery.dispatcher.dispatchOnce();
  const got = receiver.requests.slice(before);
  return (path: string) => got.find((r) => r.path === path)!;
}
const signsWith = (secret: string, req: { rawBody: Buffer; headers: Record<string, unknown> }) =>
  verifyWebhook(req.rawBody, req.headers, secret);

describe('upgrading from plaintext secrets', () => {
  it('signs the plaintext rows before they are sealed (no window in which deliveries fail)', async () => {
    expect((await rows()).every((r) => r.secret !== null && r.secretCiphertext === null)).toBe(true);
    const got = await deliverRound();
    expect(signsWith(old.plain, got('/plain'))).toBe(true);
    expect(signsWith(old.current, got('/rotated'))).toBe(true);
    expect(signsWith(old.replaced, got('/rotated'))).toBe(true);
    expect(signsWith(old.expired, got('/expired'))).toBe(true);
  });

  it('seals every row at start-up with the same signatures as before, and clears the plaintext columns', async () => {
    const at = new Date();
    const envelope = { id: 'd1', eventId: 'e1', event: 'asset.created', organizationId: tenant.orgId, data: { x: 1 } };
    const before = await Promise.all(Object.values(ids).map((id) => live(id, at)));
    const headersBefore = before.map((secrets) => signEnvelope(secrets, envelope, { now: at }).headers);
    expect(before[1]).toEqual([old.current, old.replaced]);

    const sealed = await app.deps.webhookSecrets.reseal('plaintext'); // what main.ts runs after migrating
    expect(sealed).toMatchObject({ total: 3, resealed: 3, failed: [], remaining: 0 });
    for (const r of await rows()) {
      expect(r).toMatchObject({ secret: null, previousSecret: null });
      expect(r.secretCiphertext).toMatch(/^v1:test:/);
    }
    const byId = new Map((await rows()).map((r) => [r.id, r]));
    expect(byId.get(ids.rotated)!.previousSecretCiphertext).toMatch(/^v1:test:/);
    expect(byId.get(ids.expired)!.previousSecretCiphertext).toBeNull(); // its overlap was over: nothing to keep

    const after = await Promise.all(Object.values(ids).map((id) => live(id, at)));
    expect(after.map((secrets) => signEnvelope(secrets, envelope, { now: at }).headers)).toEqual(headersBefore);
    const got = await deliverRound();
    expect(signsWith(old.plain, got('/plain'))).toBe(true);
    expect(signsWith(old.current, got('/rotated'))).toBe(true);
    expect(signsWith(old.replaced, got('/rotated'))).toBe(true);
    expect((await app.deps.webhookSecrets.reseal('plaintext')).total).toBe(0); // a second start has nothing to do
  });

  it('takes in what instances of the previous release write during a rolling upgrade', async () => {
    // 8ba511f's rotateSecret on a sealed row: the replaced secret is its `secret` column, NULL by now.
    const rotatedByOld = newSecret();
    await db.sql.query(
      `UPDATE webhook_subscriptions SET "previousSecret" = secret, "previousSecretExpiresAt" = now() + interval '1 hour',
         secret = $2, "updatedAt" = now() WHERE id = $1`,
      [ids.plain, rotatedByOld],
    );
    // 8ba511f's createWebhook: a plaintext row.
    const createdByOld = { id: randomUUID(), secret: newSecret() };
    await insertOld(createdByOld.id, '/created-by-old', createdByOld.secret, null, 0);

    expect(await live(ids.plain)).toEqual([rotatedByOld, old.plain]);
    let got = await deliverRound();
    expect(signsWith(rotatedByOld, got('/plain')) && signsWith(old.plain, got('/plain'))).toBe(true);
    expect(signsWith(createdByOld.secret, got('/created-by-old'))).toBe(true);

    // The periodic job seals them; signing is unchanged.
    const job = JOBS.map((make) => make(app.deps)).find((j) => j?.name === 'webhook-secrets-seal')!;
    await job.run();
    expect((await rows()).every((r) => r.secret === null && r.previousSecret === null)).toBe(true);
    expect(await live(ids.plain)).toEqual([rotatedByOld, old.plain]);
    got = await deliverRound();
    expect(signsWith(createdByOld.secret, got('/created-by-old'))).toBe(true);

    if (onPostgres) {
      const dump = execFileSync('pg_dump', ['--data-only', db.url!], { maxBuffer: 256 * 1024 * 1024 }).toString();
      for (const secret of [...Object.values(old), rotatedByOld, createdByOld.secret]) {
        expect(dump).not.toContain(secret.slice('whsec_'.length));
        expect(dump).not.toContain(Buffer.from(secret.slice(6), 'base64').toString('hex'));
      }
    }
  });
});
