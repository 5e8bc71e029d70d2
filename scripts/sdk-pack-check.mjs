// Proves `npm pack` of sdk/ gives an installable package: packs it, installs the tarball into an empty project,
// imports it from plain Node (ESM), verifies a signature with it, and type-checks a consumer against the
// shipped declarations. Run by .ci/run; `npm run sdk:pack-check`.
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SDK = path.join(ROOT, 'sdk');
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const npm = (args, cwd) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });

const work = mkdtempSync(path.join(os.tmpdir(), 'fleet-sdk-pack-'));
try {
  const started = Date.now();
  execFileSync(process.execPath, [TSC, '-p', path.join(SDK, 'tsconfig.json')], { stdio: 'inherit' });
  const [packed] = JSON.parse(npm(['pack', '--json', '--ignore-scripts', '--pack-destination', work], SDK));
  const tarball = path.join(work, packed.filename);
  const shipped = packed.files.map((f) => f.path);
  for (const required of ['package.json', 'README.md', 'dist/index.js', 'dist/index.d.ts']) {
    if (!shipped.includes(required)) throw new Error(`the tarball lacks ${required}`);
  }
  if (shipped.some((f) => f.startsWith('src/'))) throw new Error('the tarball ships sources');

  const app = path.join(work, 'app');
  npm(['init', '-y'], (execFileSync('mkdir', ['-p', app]), app));
  npm(['pkg', 'set', 'type=module'], app);
  npm(['install', '--no-audit', '--no-fund', '--offline', tarball], app);
  const installed = readdirSync(path.join(app, 'node_modules')).filter((f) => !f.startsWith('.'));
  if (installed.length !== 1) throw new Error(`runtime dependencies were installed: ${installed.join(', ')}`);

  const secret = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
  const ts = Math.floor(Date.now() / 1000);
  const body = JSON.stringify({ id: 'd1', event: 'asset.created', organizationId: 'o', sentAt: '', data: {} });
  const sig = `v1=${createHmac('sha256', secret).update(`${ts}.${body}`).digest('hex')}`;
  writeFileSync(
    path.join(app, 'smoke.js'),
    `import { FleetClient, verifyWebhook, FleetApiError, OPERATIONS } from '@fleet-ops/sdk';
const client = new FleetClient({ apiKey: 'flt_x', baseUrl: 'http://127.0.0.1:9' });
if (typeof client.assets.listAll !== 'function' || typeof client.tools.checkout !== 'function') throw new Error('methods');
if (!(Object.keys(OPERATIONS).length > 50) || typeof FleetApiError !== 'function') throw new Error('exports');
const event = await verifyWebhook(${JSON.stringify(body)}, { 'x-service-timestamp': '${ts}', 'x-service-signature': '${sig}' }, '${secret}');
if (event.event !== 'asset.created') throw new Error('verify');
console.log('imported and verified');
`,
  );
  execFileSync(process.execPath, ['smoke.js'], { cwd: app, stdio: 'inherit' });

  writeFileSync(
    path.join(app, 'consumer.ts'),
    `import { FleetClient, FleetApiError, verifyWebhook, type AssetRow, type WebhookEvent } from '@fleet-ops/sdk';
export async function main(raw: string, headers: Record<string, string>): Promise<number> {
  const client = new FleetClient({ apiKey: 'k', baseUrl: 'http://x' });
  const rows: AssetRow[] = [];
  for await (const a of client.assets.listAll({ limit: 100 })) rows.push(a);
  const event: WebhookEvent = await verifyWebhook(raw, headers, 's');
  if (event.event === 'tool.low_stock') return event.data.newStockLevel;
  try { await client.tools.checkout('id', {}); } catch (e) { if (e instanceof FleetApiError) return e.status; }
  return rows.length;
}
`,
  );
  writeFileSync(
    path.join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        target: 'ES2022',
        lib: ['ES2022', 'DOM'],
        types: [],
      },
      files: ['consumer.ts'],
    }),
  );
  execFileSync(process.execPath, [TSC, '-p', app], { stdio: 'inherit' });
  const kb = (statSync(tarball).size / 1024).toFixed(0);
  console.log(
    `sdk pack check: ${packed.filename} (${kb} KiB, ${shipped.length} files) installs, imports and type-checks; ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
