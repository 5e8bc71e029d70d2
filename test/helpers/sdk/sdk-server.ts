import type { AddressInfo } from 'node:net';
import { FleetClient, type ClientOptions } from '@fleet-ops/sdk';
import { createTestApp, type TestApp } from '../app/test-app.ts';

export interface SdkServer {
  t: TestApp;
  /** http://127.0.0.1:<port>: the app listening on a real socket, as an SDK user reaches it. */
  baseUrl: string;
  client(apiKey: string, options?: Partial<ClientOptions>): FleetClient;
  close(): Promise<void>;
}

/** A test app on a fresh database, listening on an ephemeral port. */
export async function startSdkServer(env: Record<string, string> = {}): Promise<SdkServer> {
  const t = await createTestApp(env);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  return {
    t,
    baseUrl,
    client: (apiKey, options = {}) => new FleetClient({ apiKey, baseUrl, retryBaseDelayMs: 20, ...options }),
    close: () => t.close(),
  };
}

/** A fetch that counts its calls and lets a test decide each call's fate. */
export function recordingFetch(
  decide: (n: number, url: string, init: RequestInit) => 'pass' | 'fail-before' | 'lose-response' = () => 'pass',
) {
  const calls: { url: string; method: string; headers: Headers; status?: number }[] = [];
  const impl: typeof fetch = async (input, init = {}) => {
    const url = String(input);
    const entry = { url, method: init.method ?? 'GET', headers: new Headers(init.headers) };
    calls.push(entry);
    const fate = decide(calls.length, url, init);
    if (fate === 'fail-before') throw new TypeError('fetch failed (simulated: connection refused)');
    const res = await fetch(input, init);
    Object.assign(entry, { status: res.status });
    if (fate === 'lose-response') {
      await res.arrayBuffer();
      throw new TypeError('fetch failed (simulated: connection reset after the server answered)');
    }
    return res;
  };
  return { impl, calls };
}
