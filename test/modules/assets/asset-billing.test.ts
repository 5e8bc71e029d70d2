import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { importAndCommit } from '../../helpers/app/imports.ts';

/** A billing provider that records requests; `hang` makes it accept and never answer. */
function provider() {
  const received: { body: any }[] = [];
  const state = { hang: false, status: 200, open: 0 };
  const server: Server = createServer((req: IncomingMessage, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      received.push({ body: JSON.parse(raw) });
      if (state.hang) {
        state.open++;
        return;
      }
      res.writeHead(state.status).end();
    });
  });
  return { server, received, state };
}

let t: TestApp;
const billing = provider();
beforeAll(async () => {
  await new Promise<void>((r) => billing.server.listen(0, '127.0.0.1', r));
  const port = (billing.server.address() as AddressInfo).port;
  t = await createTestApp({ BILLING_SYNC_URL: `http://127.0.0.1:${port}/quantity`, BILLING_SYNC_TIMEOUT_MS: '60000' });
});
afterAll(async () => {
  billing.server.closeAllConnections();
  billing.server.close();
  await t.close();
});

describe('billing quantity sync', () => {
  it('posts the billable asset count after a create, in the background', async () => {
    const tenant = await t.tenant();
    await t.api.post('/api/v1/assets', tenant.key, { nickname: 'A', assetClass: 'trailer' });
    await t.api.post('/api/v1/assets/batch', tenant.key, [
      { nickname: 'B', assetClass: 'trailer' },
      { nickname: 'C', assetClass: 'trailer' },
    ]);
    await t.deps.background.idle();
    const mine = billing.received
      .filter((r) => r.body.organizationId === tenant.orgId)
      .map((r) => r.body.billableAssets);
    expect(mine).toEqual([1, 3]);
  });

  it('posts the count after an assets import creates assets, not after one that only updates', async () => {
    const tenant = await t.tenant();
    const csv = 'customerAssetNumber,nickname,assetClass\nI-1,One,trailer\nI-2,Two,trailer\n';
    await importAndCommit(t, tenant.key, 'assets', csv);
    await importAndCommit(t, tenant.key, 'assets', 'customerAssetNumber,nickname\nI-1,Renamed\n');
    await t.deps.background.idle();
    const mine = billing.received
      .filter((r) => r.body.organizationId === tenant.orgId)
      .map((r) => r.body.billableAssets);
    expect(mine).toEqual([2]);
  });

  it('posts the count again after an import that created assets is rolled back', async () => {
    const tenant = await t.tenant();
    const csv = 'customerAssetNumber,nickname,assetClass\nR-1,One,trailer\nR-2,Two,trailer\n';
    const done = await importAndCommit(t, tenant.key, 'assets', csv);
    await t.deps.background.idle();
    expect((await t.api.post(`/api/v1/imports/${done.id}/rollback`, tenant.key)).statusCode).toBe(200);
    await t.deps.background.idle();
    const mine = billing.received
      .filter((r) => r.body.organizationId === tenant.orgId)
      .map((r) => r.body.billableAssets);
    expect(mine).toEqual([2, 0]);
  });

  it('a provider that never answers does not hold the create', async () => {
    const tenant = await t.tenant();
    billing.state.hang = true;
    const res = await t.api.post('/api/v1/assets', tenant.key, { nickname: 'Quick', assetClass: 'trailer' });
    expect(res.statusCode).toBe(201);
    // The response is out while the provider still holds the sync request open.
    await expect.poll(() => billing.state.open).toBe(1);
    expect(t.deps.background.size).toBe(1);
    billing.state.hang = false;
    billing.server.closeAllConnections();
    await t.deps.background.idle();
  });

  it('a failing provider is logged and does not fail the create', async () => {
    const tenant = await t.tenant();
    billing.state.status = 503;
    const res = await t.api.post('/api/v1/assets', tenant.key, { nickname: 'Still fine', assetClass: 'trailer' });
    expect(res.statusCode).toBe(201);
    await t.deps.background.idle();
    billing.state.status = 200;
    expect(t.logs.some((l) => l.task === 'billing-sync' && l.orgId === tenant.orgId && l.level === 50)).toBe(true);
  });
});
