import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import selfsigned from 'selfsigned';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestTenant } from '../helpers/app/tenants.ts';
import { startSdkServer, type SdkServer } from '../helpers/sdk/sdk-server.ts';

/** The examples run as a user runs them (docs/api/sdk.md): `npx tsx examples/<file>.ts` with env vars. */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(path.join(os.tmpdir(), 'fleet-examples-'));
let s: SdkServer;
let tenant: TestTenant;
let tls: { cert: string; key: string };

beforeAll(async () => {
  const pems = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], { keySize: 2048 });
  tls = { cert: path.join(dir, 'cert.pem'), key: path.join(dir, 'key.pem') };
  writeFileSync(tls.cert, pems.cert);
  writeFileSync(tls.key, pems.private);
  s = await startSdkServer({ WEBHOOK_CA_FILE: tls.cert, WEBHOOK_RETRY_SCHEDULE: '0' });
  tenant = await s.t.tenant();
});
afterAll(async () => {
  await s.close();
  rmSync(dir, { recursive: true, force: true });
});

function run(file: string, env: Record<string, string>, args: string[] = []) {
  return spawn(process.execPath, ['--import', 'tsx', path.join('examples', file), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

async function finish(child: ChildProcess) {
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const code = await new Promise<number | null>((r) => child.on('close', r));
  return { code, out, err, last: () => JSON.parse(out.trim().split('\n').pop()!) };
}

describe('examples/sync-assets.ts', () => {
  it('creates the missing assets, changes nothing on a second run, renames what changed', async () => {
    const env = { FLEET_API_KEY: tenant.key, FLEET_BASE_URL: s.baseUrl };
    const first = await finish(run('sync-assets.ts', env));
    expect(first.code, first.err).toBe(0);
    expect(first.last()).toEqual({ created: 4, updated: 0, unchanged: 0, failed: 0 });
    const second = await finish(run('sync-assets.ts', env));
    expect(second.last()).toEqual({ created: 0, updated: 0, unchanged: 4, failed: 0 });
    const changed = path.join(dir, 'assets.json');
    writeFileSync(
      changed,
      JSON.stringify([
        { customerAssetNumber: 'TRK-101', nickname: 'Truck 101 (blue)', assetClass: 'on-road' },
        { customerAssetNumber: 'BAD-1', nickname: 'Hovercraft', assetClass: 'hover' },
      ]),
    );
    const third = await finish(run('sync-assets.ts', env, [changed]));
    expect(third.code).toBe(1);
    expect(third.last()).toEqual({ created: 0, updated: 1, unchanged: 0, failed: 1 });
    expect(third.err).toContain('refused BAD-1: 422 validation_failed');
  }, 120_000);
});

describe('examples/webhook-receiver.ts', () => {
  it('subscribes itself, verifies real deliveries, refuses forged ones', async () => {
    const child = run('webhook-receiver.ts', {
      FLEET_API_KEY: tenant.key,
      FLEET_BASE_URL: s.baseUrl,
      PORT: '0',
      TLS_CERT: tls.cert,
      TLS_KEY: tls.key,
    });
    const lines: any[] = [];
    let errors = '';
    child.stderr!.on('data', (d) => (errors += d));
    child.stdout!.on('data', (d: Buffer) =>
      lines.push(
        ...d
          .toString()
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l)),
      ),
    );
    const waitFor = async (pred: (l: any) => boolean) => {
      for (let i = 0; i < 300 && !lines.some(pred); i++) await new Promise((r) => setTimeout(r, 100));
      const found = lines.find(pred);
      if (!found) throw new Error(`receiver said: ${JSON.stringify(lines)} ${errors}`);
      return found;
    };
    try {
      const { listening } = await waitFor((l) => l.listening);
      await s.client(tenant.key).assets.create({ nickname: 'Hooked truck', assetClass: 'on-road' });
      for (let i = 0; i < 5 && !lines.some((l) => l.verified); i++) await s.t.deps.delivery.dispatcher.dispatchOnce();
      expect(await waitFor((l) => l.verified)).toMatchObject({
        event: 'asset.created',
        duplicate: false,
        summary: 'new on-road asset Hooked truck',
      });
      const forged = await new Promise<number>((resolve, reject) => {
        const body = '{"id":"x","event":"asset.created","data":{}}';
        const headers = {
          'x-service-timestamp': String(Math.floor(Date.now() / 1000)),
          'x-service-signature': 'v1=00',
        };
        https
          .request(listening, { method: 'POST', headers, ca: readFileSync(tls.cert) }, (res) => {
            res.resume();
            resolve(res.statusCode!);
          })
          .on('error', reject)
          .end(body);
      });
      expect(forged).toBe(400);
      expect(await waitFor((l) => l.verified === false)).toMatchObject({ reason: 'bad_signature' });
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.on('close', r));
    }
    const subs = await s.client(tenant.key).webhooks.list();
    expect(subs.webhooks).toHaveLength(0);
  }, 120_000);
});
