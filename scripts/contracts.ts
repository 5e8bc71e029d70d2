// Writes (`write`) or verifies (`check`) the committed contract documents: openapi.yaml and friends.
// They are generated from a real app instance with a fixed configuration, so output is deterministic.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { buildApp } from '../src/app.ts';
import { createDeps } from '../src/composition.ts';
import { loadConfig } from '../src/config.ts';
import { CONTRACT_DOCUMENTS } from '../src/contracts/documents.ts';
import { openDatabase } from '../src/db/database.ts';
import { renderSdkFiles } from './sdk-codegen.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export async function renderContracts(): Promise<Map<string, string>> {
  const config = loadConfig({ PUBLIC_BASE_URL: 'http://localhost:3000', LOG_LEVEL: 'silent' });
  const db = await openDatabase({ dataDir: 'memory://' });
  const deps = createDeps(config, db, pino({ level: 'silent' }) as unknown as FastifyBaseLogger);
  const app = await buildApp(deps);
  await app.ready();
  try {
    const docs = new Map(
      await Promise.all(CONTRACT_DOCUMENTS.map(async (doc) => [doc.file, await doc.render(app)] as const)),
    );
    // The SDK's types, operation table and event types follow the rendered contract (sdk/src/generated/).
    for (const [file, content] of await renderSdkFiles(docs.get('openapi.yaml')!)) docs.set(file, content);
    return docs;
  } finally {
    await app.close();
    await deps.close();
    await db.close();
  }
}

async function main(mode: string) {
  const docs = await renderContracts();
  const stale: string[] = [];
  for (const [file, content] of docs) {
    const target = path.join(ROOT, file);
    if (mode === 'write') {
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, content);
      console.log(`wrote ${file}`);
    } else if (!existsSync(target) || readFileSync(target, 'utf8') !== content) {
      stale.push(file);
    }
  }
  if (stale.length) {
    console.error(`stale: ${stale.join(', ')}; run \`npm run contracts\` and commit the result`);
    process.exit(1);
  }
  if (mode === 'check') console.log('contracts up to date');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const mode = process.argv[2];
  if (mode !== 'write' && mode !== 'check') {
    console.error('usage: tsx scripts/contracts.ts write|check');
    process.exit(2);
  }
  main(mode).then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
