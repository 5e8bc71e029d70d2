import { createTestApp, type TestApp } from '../app/test-app.ts';
import type { FakeProvider } from './fake-provider.ts';

/** A test app that trusts the fake provider's certificate, with instant retries and short timeouts. */
export function telematicsApp(provider: FakeProvider, env: Record<string, string> = {}): Promise<TestApp> {
  return createTestApp({
    WEBHOOK_CA_FILE: provider.caFile,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    TELEMATICS_ENABLED: 'false',
    TELEMATICS_RETRY_BASE_MS: '1',
    TELEMATICS_TIMEOUT_MS: '1500',
    TELEMATICS_MAX_RETRY_AFTER_SEC: '1',
    ...env,
  });
}

/** Asks for a sync and waits for the run to end; returns the run as listed. */
export async function syncAndWait(t: TestApp, key: string, connectionId: string) {
  const res = await t.api.post(`/api/v1/telematics/connections/${connectionId}/sync`, key);
  if (res.statusCode !== 202) throw new Error(`sync: ${res.statusCode} ${res.body}`);
  const { runId } = res.json();
  await t.deps.background.idle();
  const runs = (await t.api.get(`/api/v1/telematics/connections/${connectionId}/runs`, key)).json().runs;
  return runs.find((r: { runId: string }) => r.runId === runId);
}

export async function makeConnection(t: TestApp, key: string, body: Record<string, unknown>): Promise<string> {
  const res = await t.api.post('/api/v1/telematics/connections', key, {
    name: 'Feed',
    standard: 'iso-15143-3',
    auth: { type: 'none' },
    ...body,
  });
  if (res.statusCode !== 201) throw new Error(`create connection: ${res.statusCode} ${res.body}`);
  return res.json().connectionId;
}
