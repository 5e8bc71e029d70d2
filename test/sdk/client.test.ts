import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FleetApiError, FleetClient, OPERATIONS, RESOURCES, type OperationId } from '@fleet-ops/sdk';
import { WALKTHROUGH, fill, valueAt } from '../../src/contracts/walkthrough.ts';
import type { TestTenant } from '../helpers/app/tenants.ts';
import { startSdkServer, type SdkServer } from '../helpers/sdk/sdk-server.ts';
import { parseYaml } from '../helpers/contracts/yaml-document.ts';

let s: SdkServer;
let tenant: TestTenant;
let client: FleetClient;

beforeAll(async () => {
  s = await startSdkServer();
  tenant = await s.t.tenant();
  client = s.client(tenant.key);
});
afterAll(() => s.close());

const doc = parseYaml(readFileSync(new URL('../../openapi.yaml', import.meta.url), 'utf8'));
const documented: string[] = Object.values<Record<string, { operationId?: string }>>(doc.paths).flatMap((item) =>
  Object.values(item)
    .map((op) => op?.operationId)
    .filter((id): id is string => typeof id === 'string'),
);
type Method = (...args: unknown[]) => Promise<unknown>;
const methodOf = (c: FleetClient, id: OperationId) => {
  const spec = OPERATIONS[id];
  return (c as unknown as Record<string, Record<string, Method>>)[spec.resource][spec.name];
};

describe('the generated surface', () => {
  it('has exactly one method per operation of openapi.yaml, and no two share a name', () => {
    expect(Object.keys(OPERATIONS).sort()).toEqual([...documented].sort());
    const names = Object.values(OPERATIONS).flatMap((o) =>
      [o.name, o.listAll].filter(Boolean).map((n) => `${o.resource}.${n}`),
    );
    expect(new Set(names).size).toBe(names.length);
    for (const id of documented) expect(typeof methodOf(client, id as OperationId), id).toBe('function');
    const resources = client as unknown as Record<string, Record<string, unknown>>;
    const methodCount = RESOURCES.reduce((n, r) => n + Object.keys(resources[r]).length, 0);
    expect(methodCount).toBe(names.length);
  });

  it('names methods after the resource and the verb', () => {
    expect(OPERATIONS.listAssets).toMatchObject({ resource: 'assets', name: 'list', listAll: 'listAll' });
    expect(OPERATIONS.checkoutTool).toMatchObject({ resource: 'tools', name: 'checkout' });
    expect(OPERATIONS.createHoursLog).toMatchObject({ resource: 'hours', name: 'create' });
    expect(OPERATIONS.listToolEvents).toMatchObject({
      resource: 'tools',
      name: 'listEvents',
      listAll: 'listAllEvents',
    });
    expect(OPERATIONS.listWebhookDeliveries).toMatchObject({ resource: 'webhooks', name: 'listDeliveries' });
    expect(OPERATIONS.listWorkOrders).toMatchObject({ resource: 'workOrders', name: 'list' });
  });
});

describe('every method against a real server', () => {
  it('runs the walkthrough (every operation once) through the SDK', async () => {
    const vars: Record<string, string> = { webhookUrl: 'https://127.0.0.1:9/fleet-hook', selfUserId: tenant.userId };
    const called = new Set<string>();
    for (const raw of WALKTHROUGH) {
      const step = fill(raw, vars, Date.now());
      const spec = OPERATIONS[step.operationId as OperationId];
      const args: unknown[] = spec.pathParams.map((p) => step.params?.[p]);
      // A multipart step (an upload) goes through the SDK as the FormData its raw body encodes.
      if (spec.body !== 'none')
        args.push(
          step.rawBody !== undefined
            ? await new Response(step.rawBody, { headers: step.headers }).formData()
            : step.body,
        );
      if (spec.query) args.push(step.query);
      args.push({ headers: step.headers });
      const label = step.name ?? step.operationId;
      let result: unknown;
      try {
        result = await methodOf(client, step.operationId as OperationId)(...args);
      } catch (err) {
        if (!(err instanceof FleetApiError) || err.status !== step.status) throw new Error(`${label}: ${err}`);
        result = err.body;
      }
      called.add(step.operationId);
      if (step.contentType?.startsWith('text/')) {
        expect(typeof result, label).toBe('string');
        continue;
      }
      if (step.contentType) {
        expect(result, label).toBeInstanceOf(Blob);
        expect((result as Blob).type, label).toContain(step.contentType);
        continue;
      }
      for (const check of step.checks ?? []) {
        const value = valueAt(result, check.path);
        if ('equals' in check) expect(value, `${label}: ${check.path}`).toEqual(check.equals);
      }
      for (const [name, at] of Object.entries(step.save ?? {})) vars[name] = String(valueAt(result, at));
    }
    expect([...called].sort()).toEqual([...documented].sort());
  }, 180_000);
});

describe('pagination', () => {
  it('listAll follows nextCursor across pages and yields every item once', async () => {
    const other = await s.t.tenant('Paging Co');
    let requests = 0;
    const paging = s.client(other.key, {
      fetch: (input, init) => {
        requests++;
        return fetch(input, init);
      },
    });
    const batch = await paging.assets.createBatch({
      entries: Array.from({ length: 7 }, (_, i) => ({ nickname: `Unit ${i}`, assetClass: 'trailer' as const })),
    });
    expect(batch.summary).toMatchObject({ succeeded: 7 });
    requests = 0;
    const seen: string[] = [];
    for await (const asset of paging.assets.listAll({ limit: 3 })) seen.push(asset.id);
    expect(requests).toBe(3);
    expect(new Set(seen).size).toBe(7);
    const created = batch.results.flatMap((r) => ('assetId' in r ? [r.assetId] : []));
    expect(seen.sort()).toEqual(created.sort());
  });
});

describe('typed errors', () => {
  it('carries status, code, fieldErrors and requestId', async () => {
    const err = await client.assets.create({ nickname: '', assetClass: 'spaceship' as never }).catch((e) => e);
    expect(err).toBeInstanceOf(FleetApiError);
    expect(err).toMatchObject({ status: 422, code: 'validation_failed' });
    expect(Object.keys(err.fieldErrors)).toEqual(expect.arrayContaining(['assetClass']));
    expect(err.requestId).toMatch(/\S/);
    const missing = await client.assets.get('no-such-asset').catch((e) => e);
    expect(missing).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('reports a refused key with its code and does not retry it', async () => {
    let requests = 0;
    const bad = new FleetClient({
      apiKey: 'flt_not-a-real-key',
      baseUrl: s.baseUrl,
      fetch: (i, init) => (requests++, fetch(i, init)),
    });
    const err = await bad.meta.getMe().catch((e) => e);
    expect(err).toMatchObject({ status: 401, code: expect.stringMatching(/malformed_token|unknown_token/) });
    expect(requests).toBe(1);
  });

  it('names a missing scope', async () => {
    const readOnly = await tenant.newKey({ scopes: 'assets:read' });
    const err = await s
      .client(readOnly.key)
      .assets.create({ nickname: 'X', assetClass: 'trailer' })
      .catch((e) => e);
    expect(err).toMatchObject({ status: 403, code: 'missing_scope:assets:write' });
  });
});
