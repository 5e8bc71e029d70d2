import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pino from 'pino';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { buildApp } from '../../../src/app.ts';
import { createDeps, type AppDeps } from '../../../src/composition.ts';
import { loadConfig } from '../../../src/config.ts';
import type { Database } from '../../../src/db/database.ts';
import { apiClient } from '../app/test-app.ts';
import { TEST_SECRETS_KEYS } from '../run/test-env.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

export * from './receiver.ts';

type Verify = (rawBody: Buffer | string, headers: Record<string, unknown>, secret: string, nowSec?: number) => boolean;

/**
 * The receiver-side verifier exactly as published: the first ```js block after the "Verifying signatures"
 * heading of docs/api/webhooks.md, loaded as a module.
 */
export async function loadPublishedVerifier(): Promise<{ verifyWebhook: Verify; source: string }> {
  const candidates = ['docs/api/webhooks.md'].map((f) => path.join(ROOT, f)).filter(existsSync);
  for (const file of candidates) {
    const text = readFileSync(file, 'utf8');
    const at = text.search(/^#+ Verifying signatures/m);
    if (at < 0) continue;
    const block = /```js\n([\s\S]*?)```/.exec(text.slice(at));
    if (!block) continue;
    const module = path.join(os.tmpdir(), `fleet-verify-${randomBytes(6).toString('hex')}.mjs`);
    writeFileSync(module, block[1]);
    const loaded = (await import(pathToFileURL(module).href)) as { verifyWebhook: Verify };
    return { verifyWebhook: loaded.verifyWebhook, source: block[1] };
  }
  throw new Error('no "Verifying signatures" section with a ```js block in the webhook docs');
}

export const silentLogger = () => pino({ level: 'silent' }) as unknown as FastifyBaseLogger;

/** A full app (one "process") on an existing database; close() leaves the database open. */
export async function appOn(db: Database, env: Record<string, string> = {}) {
  const config = loadConfig({
    SECRETS_ENCRYPTION_KEYS: TEST_SECRETS_KEYS,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    LOG_LEVEL: 'silent',
    ...env,
  });
  const deps: AppDeps = createDeps(config, db, silentLogger());
  const app: FastifyInstance = await buildApp(deps);
  await app.ready();
  return {
    app,
    deps,
    api: apiClient(app),
    async close() {
      await app.close();
      await deps.close();
    },
  };
}

/** Polls until `check` is true (for background work), failing after `ms`. */
export async function eventually(check: () => Promise<boolean> | boolean, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
