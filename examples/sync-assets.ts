// Makes the fleet match a list of assets kept elsewhere (an ERP export, a spreadsheet): creates the missing
// ones and renames the changed ones, matched on customerAssetNumber. Safe to re-run: a second run changes nothing.
//
//   FLEET_API_KEY=flt_... FLEET_BASE_URL=http://localhost:3000 npx tsx examples/sync-assets.ts [assets.json]
//
// Prints one line per change and a JSON summary last; exits 1 when a row was refused.
import { readFile } from 'node:fs/promises';
import { FleetApiError, FleetClient, type AssetRow, type CreateAssetRequest } from '@fleet-ops/sdk';

type SourceAsset = CreateAssetRequest & { customerAssetNumber: string };

const apiKey = process.env.FLEET_API_KEY;
if (!apiKey) {
  console.error('Set FLEET_API_KEY (and FLEET_BASE_URL when the API is not on http://localhost:3000)');
  process.exit(2);
}
const file = process.argv[2] ?? new URL('./assets.json', import.meta.url);
const source = JSON.parse(await readFile(file, 'utf8')) as SourceAsset[];

// Retries (429, 5xx, network errors) and Idempotency-Keys on writes are on by default.
const client = new FleetClient({ apiKey, baseUrl: process.env.FLEET_BASE_URL ?? 'http://localhost:3000' });

// One pass over the whole fleet, page by page, indexed by the number the source system uses.
const fleet = new Map<string, AssetRow>();
for await (const asset of client.assets.listAll({ limit: 200 })) {
  if (asset.customerAssetNumber) fleet.set(asset.customerAssetNumber, asset);
}

const summary = { created: 0, updated: 0, unchanged: 0, failed: 0 };
for (const row of source) {
  const current = fleet.get(row.customerAssetNumber);
  try {
    if (!current) {
      const { assetId } = await client.assets.create(row);
      console.log(`created ${row.customerAssetNumber} -> ${assetId}`);
      summary.created++;
    } else if (current.nickname !== row.nickname) {
      await client.assets.update(current.id, { nickname: row.nickname });
      console.log(`renamed ${row.customerAssetNumber}: ${current.nickname} -> ${row.nickname}`);
      summary.updated++;
    } else {
      summary.unchanged++;
    }
  } catch (err) {
    if (!(err instanceof FleetApiError)) throw err; // network trouble that outlasted the retries: stop
    summary.failed++;
    const fields = err.fieldErrors ? ` ${JSON.stringify(err.fieldErrors)}` : '';
    console.error(`refused ${row.customerAssetNumber}: ${err.status} ${err.code}${fields} (request ${err.requestId})`);
  }
}
console.log(JSON.stringify(summary));
process.exitCode = summary.failed ? 1 : 0;
