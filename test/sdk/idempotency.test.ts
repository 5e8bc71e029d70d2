import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestTenant } from '../helpers/app/tenants.ts';
import { recordingFetch, startSdkServer, type SdkServer } from '../helpers/sdk/sdk-server.ts';

/**
 * The SDK's automatic Idempotency-Key against the real server: a create whose answer was lost is retried and
 * applied once. This is the proof, end to end, that retried writes are safe; without the server's Idempotency-Key
 * handling (or without the SDK sending the key) the retry creates a second asset and this file fails.
 */
let s: SdkServer;
let tenant: TestTenant;

beforeAll(async () => {
  s = await startSdkServer();
  tenant = await s.t.tenant();
});
afterAll(() => s.close());

describe('automatic Idempotency-Key (server side)', () => {
  it('a retried create never duplicates', async () => {
    const nickname = `Retried ${Date.now()}`;
    // The first attempt reaches the server and commits, but its answer is lost: the SDK retries with the same key.
    const { impl, calls } = recordingFetch((n) => (n === 1 ? 'lose-response' : 'pass'));
    const client = s.client(tenant.key, { fetch: impl });
    const created = await client.assets.create({ nickname, assetClass: 'trailer' });
    expect(calls).toHaveLength(2);
    expect(calls[1].headers.get('idempotency-key')).toBe(calls[0].headers.get('idempotency-key'));
    const matching = [];
    for await (const a of s.client(tenant.key).assets.listAll({ limit: 200 }))
      if (a.nickname === nickname) matching.push(a.id);
    expect(matching).toEqual([created.assetId]);
  });

  it('a retried PATCH is applied once and answers as the first time', async () => {
    const client = s.client(tenant.key);
    const { assetId } = await client.assets.create({ nickname: `Patched ${Date.now()}`, assetClass: 'trailer' });
    const first = await client.assets.update(assetId, { nickname: 'Once' }, { idempotencyKey: `patch-${assetId}` });
    const again = await client.assets.update(assetId, { nickname: 'Once' }, { idempotencyKey: `patch-${assetId}` });
    expect(again).toEqual(first);
    const reused = await client.assets
      .update(assetId, { nickname: 'Other body' }, { idempotencyKey: `patch-${assetId}` })
      .catch((e) => e);
    expect(reused).toMatchObject({ status: 422, code: 'idempotency_key_reused' });
  });
});
