import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../../src/cli/admin.ts';
import { loadConfig } from '../../src/config.ts';
import { hashApiKey } from '../../src/core/api-keys.ts';
import { acquireDataDirLock } from '../../src/db/data-dir-lock.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db/test-database.ts';
import { seedEmbeddedDatabase } from '../helpers/processes/embedded-data-dir.ts';
import { nodeArgs } from '../helpers/processes/node-process.ts';

let db: TestDatabase;
const config = loadConfig({ PUBLIC_BASE_URL: 'http://localhost:3000' });
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.close());

async function admin(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdminCommand(db, config, argv, { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out: out.join('\n'), err: err.join('\n'), json: () => JSON.parse(out.join('\n')) };
}

describe('admin CLI commands', () => {
  it('creates an organisation, a user and a key, and lists and revokes keys', async () => {
    const org = await admin('org', 'create', '--name', 'Kestrel Haulage', '--json');
    expect(org.code).toBe(0);
    expect(org.json()).toEqual({
      id: expect.any(String),
      name: 'Kestrel Haulage',
      slug: 'kestrel-haulage',
      createdAt: expect.any(String),
    });

    const user = await admin(
      'user',
      'create',
      '--org',
      'kestrel-haulage',
      '--email',
      'Ana@Kestrel.example',
      '--name',
      'Ana',
      '--json',
    );
    expect(user.json()).toEqual({ id: expect.any(String), email: 'ana@kestrel.example', name: 'Ana' });

    const key = await admin(
      'key',
      'create',
      '--org',
      'kestrel-haulage',
      '--user',
      'ana@kestrel.example',
      '--label',
      'ERP',
      '--scopes',
      'assets:read,assets:write',
      '--expires',
      '2099-01-01T00:00:00Z',
      '--rate-limit',
      '120',
      '--json',
    );
    const created = key.json();
    expect(created).toMatchObject({
      label: 'ERP',
      scopes: ['assets:read', 'assets:write'],
      expiresAt: '2099-01-01T00:00:00.000Z',
    });
    expect(created.key).toMatch(/^flt_[A-Za-z0-9_-]{43}$/);
    const stored = await db.prisma.apiKey.findUniqueOrThrow({ where: { id: created.id } });
    expect(stored.keyHash).toBe(hashApiKey(created.key));
    expect(stored.rateLimitPerMinute).toBe(120);

    const listed = (await admin('key', 'list', '--org', 'kestrel-haulage', '--json')).json();
    expect(listed.keys).toHaveLength(1);
    expect(listed.keys[0]).toMatchObject({ id: created.id, createdBy: 'ana@kestrel.example', revokedAt: null });
    expect(JSON.stringify(listed)).not.toContain(created.key);

    const revoked = await admin('key', 'revoke', '--id', created.id, '--json');
    expect(revoked.json()).toEqual({ id: created.id, revokedAt: expect.any(String) });

    const removed = await admin(
      'user',
      'remove',
      '--org',
      'kestrel-haulage',
      '--email',
      'ana@kestrel.example',
      '--json',
    );
    expect(removed.json()).toEqual({ id: user.json().id, removedAt: expect.any(String) });
  });

  it('quickstart prints a demo key and a curl line', async () => {
    const first = await admin('quickstart');
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/API key:\s+flt_/);
    expect(first.out).toContain('curl -s -H "Authorization: Bearer flt_');
    const second = (await admin('quickstart', '--json')).json();
    expect(second.organization.slug).toMatch(/^demo-\d+$/);
    expect(second.curl).toContain(`${config.publicBaseUrl}/api/v1/me`);
  });

  it.each([
    [['org', 'create'], '--name is required'],
    [['org', 'create', '--name', 'X', '--slug', 'Bad Slug'], 'must be lowercase'],
    [['org', 'create', '--name', 'Kestrel', '--slug', 'kestrel-haulage'], 'already exists'],
    [['user', 'create', '--org', 'missing', '--email', 'a@b.co'], 'no organisation'],
    [['user', 'create', '--org', 'kestrel-haulage', '--email', 'not-an-email'], 'not an email'],
    [['key', 'create', '--org', 'kestrel-haulage', '--user', 'nobody@x.co', '--label', 'L'], 'no user'],
    [['key', 'revoke', '--id', 'nope'], 'no key'],
    [['frobnicate'], 'unknown command'],
    [['org', 'create', '--name', 'X', '--bogus'], "Unknown option '--bogus'"],
  ])('rejects %j with a one-line error and exit 1', async (argv, message) => {
    const res = await admin(...argv);
    expect(res.code).toBe(1);
    expect(res.err).toContain(message);
    expect(res.err.startsWith('error: ')).toBe(true);
    expect(res.out).toBe('');
  });

  it('validates scopes, expiry and rate limit', async () => {
    await admin('user', 'create', '--org', 'kestrel-haulage', '--email', 'bo@kestrel.example');
    const base = ['key', 'create', '--org', 'kestrel-haulage', '--user', 'bo@kestrel.example', '--label', 'L'];
    expect((await admin(...base, '--scopes', 'assets:read,assets:destroy')).err).toContain(
      'unknown scope(s): assets:destroy',
    );
    expect((await admin(...base, '--expires', 'next week')).err).toContain('not an ISO 8601');
    expect((await admin(...base, '--expires', '2001-01-01T00:00:00Z')).err).toContain('in the future');
    expect((await admin(...base, '--rate-limit', '0')).err).toContain('positive whole number');
  });
});

describe('admin CLI and the API share one service', () => {
  it('records the same audit events as the API, with no actor, and never the key', async () => {
    const org = (await admin('org', 'create', '--name', 'Audit Co', '--json')).json();
    const user = (
      await admin('user', 'create', '--org', 'audit-co', '--email', 'al@audit.example', '--name', 'Al', '--json')
    ).json();
    const key = (
      await admin(
        'key',
        'create',
        '--org',
        'audit-co',
        '--user',
        'al@audit.example',
        '--label',
        'L',
        '--scopes',
        'assets:read',
        '--json',
      )
    ).json();
    await admin('key', 'revoke', '--id', key.id, '--json');
    await admin('user', 'remove', '--org', 'audit-co', '--email', 'al@audit.example', '--json');
    const events = await db.prisma.event.findMany({ where: { orgId: org.id }, orderBy: { createdAt: 'asc' } });
    expect(events.map((e) => e.type)).toEqual(['user.created', 'apiKey.created', 'apiKey.revoked', 'user.removed']);
    expect(events.map((e) => e.data)).toMatchObject([
      { userId: user.id, restored: false, actorId: null, actorKeyId: null },
      { apiKeyId: key.id, scopes: ['assets:read'], createdById: user.id, actorId: null, actorKeyId: null },
      { apiKeyId: key.id, reason: 'revoked', actorId: null },
      { userId: user.id, actorId: null },
    ]);
    expect(JSON.stringify(events)).not.toContain(key.key.slice(4));
    expect(JSON.stringify(events)).not.toContain(hashApiKey(key.key));
  });

  it('re-adding a removed user restores the same person and revokes their old keys', async () => {
    await admin('org', 'create', '--name', 'Return Co');
    const user = (
      await admin('user', 'create', '--org', 'return-co', '--email', 'r@return.example', '--name', 'Ray', '--json')
    ).json();
    const key = (
      await admin('key', 'create', '--org', 'return-co', '--user', 'r@return.example', '--label', 'L', '--json')
    ).json();
    await admin('user', 'remove', '--org', 'return-co', '--email', 'r@return.example');
    const again = (await admin('user', 'create', '--org', 'return-co', '--email', 'r@return.example', '--json')).json();
    expect(again).toEqual({ id: user.id, email: 'r@return.example', name: 'Ray' });
    expect((await db.prisma.apiKey.findUniqueOrThrow({ where: { id: key.id } })).revokedAt).not.toBeNull();
    const dup = await admin('user', 'create', '--org', 'return-co', '--email', 'r@return.example');
    expect(dup.err).toBe('error: user r@return.example already exists in return-co');
  });
});

// A cold process on the embedded database (PGlite's WASM, migrations) can take most of a minute on a busy machine.
describe('admin CLI as a process', { timeout: 120_000 }, () => {
  const cli = path.resolve('src/cli/admin.ts');
  const run = (env: Record<string, string>, ...argv: string[]) =>
    spawnSync(process.execPath, nodeArgs(cli, ...argv), {
      env: { PATH: process.env.PATH, ...env },
      encoding: 'utf8',
      timeout: 60_000,
    });

  it('prints exactly one JSON object with --json on the embedded database', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'fleet-cli-'));
    seedEmbeddedDatabase(dir);
    try {
      const res = run({ DATA_DIR: dir }, 'org', 'create', '--name', 'Proc Co', '--json');
      expect(res.status, res.stderr).toBe(0);
      expect(JSON.parse(res.stdout)).toMatchObject({ name: 'Proc Co', slug: 'proc-co' });
      expect(res.stdout.trim().split('\n')).toHaveLength(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says clearly that the embedded database is in use by a running server', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'fleet-cli-'));
    try {
      mkdirSync(dir, { recursive: true });
      // The lock as a server of this release holds it, then as one of an earlier release did (a pid file).
      const lock = acquireDataDirLock(dir);
      for (const holding of ['lock', 'pid file']) {
        if (holding === 'pid file') {
          lock.release();
          writeFileSync(path.join(dir, 'server.lock'), String(process.pid));
        }
        const res = run({ DATA_DIR: dir }, 'key', 'list', '--org', 'x');
        expect(res.status, holding).toBe(1);
        expect(res.stderr.trim().split('\n')).toHaveLength(1);
        expect(res.stderr).toContain(`in use by another process (pid ${process.pid})`);
        expect(res.stderr).not.toMatch(/\bat .*\.[jt]s:\d+/);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rejects bad configuration with a one-line error', () => {
    const res = run({ DATABASE_URL: 'mysql://nope' }, 'key', 'list', '--org', 'x');
    expect(res.status).toBe(1);
    expect(res.stderr).toContain('DATABASE_URL');
  });
});
