import { spawnSync } from 'node:child_process';
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { newWebhookSecret, signatureFor } from '../../src/delivery/signer.ts';
import { NODE_SNIPPET, PYTHON_SNIPPET, SHELL_SNIPPET } from '../../src/site/docs.snippets.ts';
import { DOCS_EXAMPLE_SECRET, exampleDelivery } from '../../src/site/docs.webhooks.ts';

/**
 * The verification code /docs/webhooks shows is run here, as shown, against signed deliveries: fresh ones
 * (accepted), tampered bodies, stale timestamps, missing headers (refused), and a rotation overlap.
 */
const dir = mkdtempSync(path.join(tmpdir(), 'fleet-snippets-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Written independently of the service: Standard Webhooks v1 as its specification describes it. */
function standardSignature(secret: string, id: string, ts: number, body: string) {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${ts}.${body}`).digest('base64')}`;
}

interface Delivery {
  name: string;
  body: string;
  headers: Record<string, string>;
  secret: string;
  ok: boolean;
}

function deliveries(): Delivery[] {
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const legacy = newWebhookSecret(); // base64url, as secrets created before the standard format
  const old = `whsec_${randomBytes(32).toString('base64')}`;
  const now = Math.floor(Date.now() / 1000);
  const sign = (s: string, body: string, ts = now, id = randomUUID()) => ({
    'webhook-id': id,
    'webhook-timestamp': String(ts),
    'webhook-signature': standardSignature(s, id, ts, body),
    'x-service-timestamp': String(ts),
    'x-service-signature': signatureFor(s, ts, body),
  });
  const body = JSON.stringify({ id: randomUUID(), event: 'tool.low_stock', data: { name: 'Gloves "XL" <box> & co' } });
  const rotated = sign(secret, body);
  const rotatedOld = sign(old, body, now, rotated['webhook-id']);
  return [
    { name: 'fresh', body, headers: sign(secret, body), secret, ok: true },
    { name: 'legacy base64url secret', body, headers: sign(legacy, body), secret: legacy, ok: true },
    {
      name: 'rotation overlap, receiver still on the old secret',
      body,
      headers: {
        ...rotated,
        'webhook-signature': `${rotated['webhook-signature']} ${rotatedOld['webhook-signature']}`,
        'x-service-signature': `${rotated['x-service-signature']} ${rotatedOld['x-service-signature']}`,
      },
      secret: old,
      ok: true,
    },
    { name: 'tampered body', body: body.replace('XL', 'XS'), headers: sign(secret, body), secret, ok: false },
    { name: 'wrong secret', body, headers: sign(old, body), secret, ok: false },
    { name: 'stale timestamp', body, headers: sign(secret, body, now - 400), secret, ok: false },
    { name: 'future timestamp', body, headers: sign(secret, body, now + 400), secret, ok: false },
  ];
}

describe('the signing format the page documents', () => {
  it("matches the Standard Webhooks specification and the service's X-Service-Signature", () => {
    const example = exampleDelivery('flag.created');
    const ts = example.timestamp;
    expect(example.headers['webhook-signature']).toBe(
      standardSignature(DOCS_EXAMPLE_SECRET, example.headers['webhook-id'], ts, example.body),
    );
    expect(example.headers['x-service-signature']).toBe(signatureFor(DOCS_EXAMPLE_SECRET, ts, example.body));
    expect(Buffer.from(DOCS_EXAMPLE_SECRET.slice(6), 'base64')).toHaveLength(32);
  });
});

describe('Node.js snippet', () => {
  it('accepts genuine deliveries and refuses tampered, stale and foreign ones, with both signatures', async () => {
    const file = path.join(dir, 'verify.mjs');
    writeFileSync(file, NODE_SNIPPET);
    const { verifyStandardWebhook, verifyServiceSignature } = (await import(file)) as Record<
      string,
      (body: Buffer, headers: Record<string, string>, secret: string, now?: number) => void
    >;
    for (const d of deliveries()) {
      for (const verify of [verifyStandardWebhook, verifyServiceSignature]) {
        const call = () => verify(Buffer.from(d.body), d.headers, d.secret);
        if (d.ok) expect(call, `${d.name} / ${verify.name}`).not.toThrow();
        else expect(call, `${d.name} / ${verify.name}`).toThrow();
      }
    }
    const bare = deliveries()[0];
    expect(() => verifyStandardWebhook(Buffer.from(bare.body), {}, bare.secret)).toThrow('missing');
    expect(() => verifyServiceSignature(Buffer.from(bare.body), {}, bare.secret)).toThrow('missing');
    // The page's worked example, at its own time.
    const example = exampleDelivery('flag.created');
    for (const verify of [verifyStandardWebhook, verifyServiceSignature]) {
      expect(() =>
        verify(Buffer.from(example.body), example.headers, DOCS_EXAMPLE_SECRET, example.timestamp),
      ).not.toThrow();
    }
  });
});

const hasPython = spawnSync('python3', ['--version']).status === 0;
describe.skipIf(!hasPython)('Python snippet (python3)', () => {
  it('accepts genuine deliveries and refuses tampered, stale and foreign ones, with both signatures', () => {
    writeFileSync(path.join(dir, 'verify_fleet.py'), PYTHON_SNIPPET);
    const harness = `import json, sys
from verify_fleet import verify_standard_webhook, verify_service_signature
out = []
for d in json.load(sys.stdin):
    for verify in (verify_standard_webhook, verify_service_signature):
        try:
            verify(d["body"].encode(), {k.lower(): v for k, v in d["headers"].items()}, d["secret"])
            out.append(True)
        except ValueError:
            out.append(False)
print(json.dumps(out))
`;
    const cases = deliveries();
    const run = spawnSync('python3', ['-c', harness], { cwd: dir, input: JSON.stringify(cases), encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual(cases.flatMap((d) => [d.ok, d.ok]));
  });
});

describe('shell (openssl) snippet', () => {
  it('says valid for genuine deliveries and INVALID for tampered or foreign ones', () => {
    for (const d of deliveries()) {
      writeFileSync(path.join(dir, 'body.json'), d.body);
      const run = spawnSync('bash', ['-c', SHELL_SNIPPET], {
        cwd: dir,
        encoding: 'utf8',
        // Not a socket on stdin (Node's default pipe): bash takes that for an ssh session and runs ~/.bashrc first.
        stdio: ['ignore', 'pipe', 'pipe'],
        env: {
          PATH: process.env.PATH,
          SECRET: d.secret,
          TIMESTAMP: d.headers['x-service-timestamp'],
          SIGNATURE: d.headers['x-service-signature'],
          WEBHOOK_ID: d.headers['webhook-id'],
          WEBHOOK_SIGNATURE: d.headers['webhook-signature'],
        },
      });
      expect(run.status, run.stderr).toBe(0);
      const stale = /tolerance/.test(run.stdout);
      const valid =
        run.stdout.includes('X-Service-Signature: valid') && run.stdout.includes('webhook-signature: valid');
      expect(valid && !stale, `${d.name}: ${run.stdout}`).toBe(d.ok);
      if (!d.ok && !d.name.includes('timestamp')) expect(run.stdout).toContain('INVALID');
    }
  });
});
