import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Database } from '../../../src/db/database.ts';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { buildApp } from '../../../src/app.ts';
import { createDeps, type AppDeps } from '../../../src/composition.ts';
import { loadConfig } from '../../../src/config.ts';
import type { Clock } from '../../../src/core/clock.ts';
import { loggerOptions } from '../../../src/logger.ts';
import { createTestDatabase, type TestDatabase } from '../db/test-database.ts';
import { createTenant, type TestTenant } from './tenants.ts';
import { ECHO_ERROR_LOGS, TEST_SECRETS_KEYS } from '../run/test-env.ts';

export interface TestApp {
  app: FastifyInstance;
  db: TestDatabase;
  deps: AppDeps;
  /** Log lines written by the app (JSON objects), for asserting on logging. */
  logs: Record<string, unknown>[];
  api: ReturnType<typeof apiClient>;
  tenant(name?: string): Promise<TestTenant>;
  close(): Promise<void>;
}

type Body = unknown;
export type Res = LightMyRequestResponse & { body: string; json: <T = any>() => T };

let attachmentsDir: string | undefined;
/** Attachment bytes of tests that name no directory: one temporary directory per test process, never ./data. */
function testAttachmentsDir(): string {
  attachmentsDir ??= mkdtempSync(path.join(tmpdir(), 'fleet-test-attachments-'));
  return attachmentsDir;
}

/** Thin wrapper over app.inject: `api.get('/api/v1/assets', key)`, `api.post(url, key, body)`. */
export function apiClient(app: FastifyInstance) {
  const call = (
    method: InjectOptions['method'],
    url: string,
    key?: string | null,
    body?: Body,
    headers: Record<string, string> = {},
  ) =>
    app.inject({
      method,
      url,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      payload: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    }) as Promise<Res>;
  return {
    get: (url: string, key?: string | null, headers?: Record<string, string>) =>
      call('GET', url, key, undefined, headers),
    delete: (url: string, key?: string | null) => call('DELETE', url, key),
    post: (url: string, key?: string | null, body?: Body, headers?: Record<string, string>) =>
      call('POST', url, key, body ?? {}, headers),
    patch: (url: string, key?: string | null, body?: Body) => call('PATCH', url, key, body ?? {}),
    raw: call,
  };
}

/**
 * A full app on a fresh database. Every response under /api/v1 is checked against the route's declared
 * statuses (the serializer already checks the body against the schema): an undeclared status fails the file.
 */
export async function createTestApp(
  env: Record<string, string> = {},
  options: { clock?: Clock } = {},
): Promise<TestApp> {
  const db = await createTestDatabase();
  const logs: Record<string, unknown>[] = [];
  const stream = {
    write: (line: string) => {
      const entry = JSON.parse(line);
      logs.push(entry);
      // For runs that count them (e.g. the suite through a pooler): error-level lines also go to stderr.
      if (ECHO_ERROR_LOGS && Number(entry.level) >= 50) process.stderr.write(`[app error log] ${line}`);
    },
  };
  const logger = pino(
    loggerOptions(env.LOG_LEVEL ?? 'warn') as pino.LoggerOptions,
    stream,
  ) as unknown as FastifyBaseLogger;
  // Rate limiting has its own tests (which set the cap); elsewhere a file's many requests must not hit it.
  const config = loadConfig({
    SECRETS_ENCRYPTION_KEYS: TEST_SECRETS_KEYS,
    ATTACHMENTS_DIR: testAttachmentsDir(),
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    RATE_LIMIT_PER_MINUTE: '100000',
    PRE_AUTH_RATE_LIMIT_PER_MINUTE: '100000',
    ...env,
  });
  const deps = createDeps(config, db, logger, options);
  // Every response of every test also goes through zod: the compiled serialisers must write the same bytes.
  deps.testHooks.verifySerializers = true;
  const app = await buildApp(deps);
  const undeclared: string[] = [];
  app.addHook('onSend', async (request, reply) => {
    const schema = request.routeOptions.schema as { response?: Record<string, unknown> } | undefined;
    if (
      request.routeOptions.url?.startsWith('/api/v1') &&
      schema?.response &&
      !(String(reply.statusCode) in schema.response)
    ) {
      undeclared.push(`${request.method} ${request.routeOptions.url} -> ${reply.statusCode}`);
    }
  });
  await app.ready();
  return {
    app,
    db,
    deps,
    logs,
    api: apiClient(app),
    tenant: (name?: string) => createTenant(db, name),
    async close() {
      await app.close();
      await deps.close();
      await db.close();
      if (undeclared.length)
        throw new Error(`responses with undeclared status codes:\n${[...new Set(undeclared)].join('\n')}`);
    },
  };
}

/** An app on a database the test opened itself (through a proxy, a pooler…), its log lines captured. */
export interface AppOnDatabase {
  app: FastifyInstance;
  db: Database;
  deps: AppDeps;
  logs: Record<string, any>[];
  api: ReturnType<typeof apiClient>;
  /** Closes the app, its services and the database. */
  close(): Promise<void>;
}

/** The test key and high rate limits are defaults; `env` overrides them. */
export async function appOnDatabase(
  db: Database,
  env: Record<string, string>,
  logLevel: 'info' | 'warn' = 'info',
): Promise<AppOnDatabase> {
  const logs: Record<string, any>[] = [];
  const logger = pino(loggerOptions(logLevel) as pino.LoggerOptions, {
    write: (l: string) => logs.push(JSON.parse(l)),
  }) as unknown as FastifyBaseLogger;
  const config = loadConfig({ SECRETS_ENCRYPTION_KEYS: TEST_SECRETS_KEYS, RATE_LIMIT_PER_MINUTE: '100000', ...env });
  const deps = createDeps(config, db, logger);
  const app = await buildApp(deps);
  await app.ready();
  return {
    app,
    db,
    deps,
    logs,
    api: apiClient(app),
    async close() {
      await app.close();
      await deps.close();
      await db.close();
    },
  };
}
