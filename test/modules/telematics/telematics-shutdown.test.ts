import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../helpers/app/test-app.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { startProvider, type FakeProvider } from '../../helpers/telematics/fake-provider.ts';
import { makeConnection, telematicsApp } from '../../helpers/telematics/telematics-app.ts';

let t: TestApp;
let provider: FakeProvider;
let acme: TestTenant;

beforeAll(async () => {
  provider = await startProvider();
  // A timeout far beyond the test: only the shutdown can end the run.
  t = await telematicsApp(provider, { TELEMATICS_TIMEOUT_MS: '60000' });
  acme = await t.tenant('Acme');
});
afterAll(async () => {
  await t.close();
  await provider.close();
});

describe('a run stopped by this instance shutting down', () => {
  it('ends FAILED ("stopped") without counting against the feed: no streak, no event, due again at once', async () => {
    provider.routes.set('/hanging', () => ({ hang: true }));
    const id = await makeConnection(t, acme.key, { fleetUrl: `${provider.origin}/hanging` });
    const sync = await t.api.post(`/api/v1/telematics/connections/${id}/sync`, acme.key);
    expect(sync.statusCode).toBe(202);
    for (let i = 0; i < 200 && !provider.requests.some((r) => r.path === '/hanging'); i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    t.deps.services.telematics.stop();
    await t.deps.background.idle();
    const [run] = (await t.api.get(`/api/v1/telematics/connections/${id}/runs`, acme.key)).json().runs;
    expect(run).toMatchObject({
      runId: sync.json().runId,
      status: 'FAILED',
      error: expect.stringContaining('stopped'),
    });
    const row = await t.db.prisma.telematicsConnection.findUniqueOrThrow({ where: { id } });
    expect(row).toMatchObject({ consecutiveFailures: 0, lastError: null, leaseOwner: null });
    expect(row.nextRunAt!.getTime()).toBeLessThanOrEqual(Date.now());
    const connection = (await t.api.get(`/api/v1/telematics/connections/${id}`, acme.key)).json().connection;
    expect(connection.status).not.toBe('FAILING');
  });
});
