import { spawnSync } from 'node:child_process';
import { describe, expect, inject, it } from 'vitest';
import { nodeArgs } from '../helpers/processes/node-process.ts';

describe('packages loaded on first use', () => {
  it('starts the app without undici, prom-client or @fastify/swagger, and loads each on its first use', () => {
    const run = spawnSync(process.execPath, nodeArgs('test/fixtures/start-loads.ts'), {
      // The embedded database: what is loaded does not depend on the engine, and the child needs no server. It
      // starts from the run's migrated dump when there is one (creating and migrating a cluster is not the subject).
      env: {
        ...process.env,
        TEST_DATABASE_URL: '',
        TEST_DATABASE_POOLER_URL: '',
        PGLITE_TEMPLATE_DIR: inject('pgliteTemplateDir'),
      },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout.trim().split('\n').pop()!);
    expect(report).toEqual({
      atStart: { undici: false, promClient: false, swagger: false, yaml: false, healthStatus: 200 },
      afterSend: { undici: true, promClient: false, swagger: false, yaml: false, sendOk: false },
      afterOpenApi: { undici: true, promClient: false, swagger: true, yaml: true, openApiStatus: 200 },
    });
  }, 90_000);
});
