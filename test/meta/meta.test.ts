import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app/test-app.ts';
import { parseChangelog } from '../../src/changelog.ts';
import { MeResponse } from '../../src/meta/meta.schemas.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ GIT_COMMIT: '0123456789abcdef0123', GIT_BRANCH: 'main' });
});
afterAll(() => t.close());

describe('public meta endpoints', () => {
  it('health pings the database', async () => {
    const res = await t.api.get('/api/v1/health');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      ok: true,
      database: 'ok',
      apiVersion: 'v1',
      commit: '0123456789ab',
      uptimeSec: expect.any(Number),
    });
  });

  it('health is 503 when the database ping fails', async () => {
    const original = t.db.sql.query;
    t.db.sql.query = () => Promise.reject(new Error('connection refused'));
    try {
      const res = await t.api.get('/api/v1/health');
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ ok: false, database: 'error', apiVersion: 'v1' });
    } finally {
      t.db.sql.query = original;
    }
  });

  it('a hung database ping counts as a timeout', async () => {
    const original = t.db.sql.query;
    t.db.sql.query = () => new Promise(() => {});
    try {
      expect(await t.deps.services.meta.pingDatabase(30)).toBe('timeout');
    } finally {
      t.db.sql.query = original;
    }
  });

  it('liveness answers without the database', async () => {
    const original = t.db.sql.query;
    t.db.sql.query = () => Promise.reject(new Error('down'));
    try {
      expect((await t.api.get('/api/v1/health/live')).json()).toEqual({ ok: true, uptimeSec: expect.any(Number) });
    } finally {
      t.db.sql.query = original;
    }
  });

  it('version reports the build, branch, uptime and runtime', async () => {
    const res = await t.api.get('/api/v1/version');
    expect(res.json()).toEqual({
      ok: true,
      commit: '0123456789ab',
      branch: 'main',
      uptimeSec: expect.any(Number),
      nodeVersion: process.version,
      apiVersion: 'v1',
    });
  });

  it('changelog is the parsed CHANGELOG.md with an hour of edge caching', async () => {
    const res = await t.api.get('/api/v1/changelog');
    expect(res.headers['cache-control']).toBe('public, max-age=3600, s-maxage=3600');
    const { entries } = res.json();
    expect(entries.length).toBeGreaterThan(0);
    // An [Unreleased] heading may lead with no bullets yet; the newest release with changes is the real check.
    expect(entries.find((e: { changes: unknown[] }) => e.changes.length)).toMatchObject({
      version: expect.any(String),
      changes: expect.arrayContaining([expect.objectContaining({ type: 'added' })]),
    });
    expect(res.json()).not.toHaveProperty('ok');
  });
});

describe('health probes keep the log quiet', () => {
  let loud: TestApp;
  beforeAll(async () => {
    loud = await createTestApp({ LOG_LEVEL: 'info' });
  });
  afterAll(() => loud.close());

  it('a passing probe logs nothing at info; other requests still log theirs', async () => {
    loud.logs.length = 0;
    expect((await loud.api.get('/api/v1/health')).statusCode).toBe(200);
    expect((await loud.api.get('/api/v1/health/live')).statusCode).toBe(200);
    expect(loud.logs).toEqual([]);
    const version = await loud.api.get('/api/v1/version');
    expect(version.statusCode).toBe(200);
    expect(loud.logs.map((l) => [l.level, l.msg])).toEqual([
      [30, 'incoming request'],
      [30, 'request completed'],
    ]);
    const reqId = version.headers['x-request-id'];
    expect(loud.logs[0]).toMatchObject({
      reqId,
      req: { method: 'GET', url: '/api/v1/version', host: 'localhost:80', remoteAddress: '127.0.0.1' },
    });
    expect(loud.logs[1]).toMatchObject({ reqId, res: { statusCode: 200 }, responseTime: expect.any(Number) });
  });

  it('a failing probe logs at warn, with its request id', async () => {
    loud.logs.length = 0;
    const original = loud.db.sql.query;
    loud.db.sql.query = () => Promise.reject(new Error('connection refused'));
    try {
      const res = await loud.api.get('/api/v1/health');
      expect(res.statusCode).toBe(503);
      expect(loud.logs).toEqual([
        expect.objectContaining({ level: 40, database: 'error', reqId: res.headers['x-request-id'] }),
      ]);
    } finally {
      loud.db.sql.query = original;
    }
  });
});

describe('GET /me', () => {
  it("answers each key's own JSON, the bytes of its schema's writer, with that request's lastUsedAt", async () => {
    const acme = await t.tenant('Acme "Quoted" Ütility, Ltd.');
    const other = await t.tenant('Other');
    const odd = await acme.newKey({ label: 'ops "night" \\ shift é', scopes: 'assets:read,hours:write' });
    const later = await other.newKey({ expires: new Date(Date.now() + 86_400_000).toISOString() });
    for (const [key, orgId, keyId] of [
      [odd.key, acme.orgId, odd.id],
      [later.key, other.orgId, later.id],
      [acme.key, acme.orgId, acme.keyId],
      [odd.key, acme.orgId, odd.id],
    ]) {
      const before = Date.now();
      const res = await t.api.get('/api/v1/me', key);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      const body = res.json();
      expect(res.body).toBe(JSON.stringify(MeResponse.parse(body)));
      expect(body.organization.id).toBe(orgId);
      expect(body.apiKey.id).toBe(keyId);
      expect(Date.parse(body.apiKey.lastUsedAt)).toBeGreaterThanOrEqual(before);
      expect(Date.parse(body.apiKey.lastUsedAt)).toBeLessThanOrEqual(Date.now());
    }
    const row = await t.db.prisma.apiKey.findUniqueOrThrow({ where: { id: odd.id } });
    const body = (await t.api.get('/api/v1/me', odd.key)).json();
    expect(body).toEqual({
      ok: true,
      organization: {
        id: acme.orgId,
        name: 'Acme "Quoted" Ütility, Ltd.',
        slug: acme.slug,
        createdAt: expect.any(String),
      },
      apiKey: {
        id: odd.id,
        label: 'ops "night" \\ shift é',
        scopes: ['assets:read', 'hours:write'],
        createdAt: row.createdAt.toISOString(),
        lastUsedAt: expect.any(String),
        expiresAt: null,
        createdBy: { id: acme.userId, name: 'Olive Ops', email: acme.email },
      },
    });
  });
});

describe('changelog parser', () => {
  it('reads versions, dates, sections and wrapped bullets', () => {
    const entries = parseChangelog(
      `# Changelog\n\n## [1.1.0] - 2026-12-01\n### Fixed\n- One\n  continued\n### Added\n- Two\n\n## [1.0.0]\n- Three\n`,
    );
    expect(entries).toEqual([
      {
        version: '1.1.0',
        date: '2026-12-01',
        changes: [
          { type: 'fixed', text: 'One continued' },
          { type: 'added', text: 'Two' },
        ],
      },
      { version: '1.0.0', date: null, changes: [{ type: 'changed', text: 'Three' }] },
    ]);
  });
});
