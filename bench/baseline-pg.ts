// Baseline 2: Fastify + raw pg running the same list query the API runs, shaped the same way.
import Fastify from 'fastify';
import pg from 'pg';

const [port, url, orgId] = process.argv.slice(2);
const pool = new pg.Pool({ connectionString: url, max: 10 });
const CLASS: Record<string, string> = { 'on-road': 'on-road', 'off-road': 'off-road', trailer: 'trailer' };
const app = Fastify({ logger: false });
app.get('/assets', async () => {
  const { rows } = await pool.query(
    `SELECT id, nickname, "customerAssetNumber", "assetClass", vin, serial, "meterType", "meterUnit", "lifecycleStatus",
            "yardId", "createdAt", "updatedAt"
     FROM assets WHERE "orgId" = $1 ORDER BY "createdAt" DESC, id DESC LIMIT 51`,
    [orgId],
  );
  const page = rows.slice(0, 50).map((r) => ({
    ...r,
    assetClass: CLASS[r.assetClass],
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  }));
  const last = page[page.length - 1];
  return {
    ok: true,
    assets: page,
    nextCursor: rows.length > 50 ? Buffer.from(JSON.stringify([last.createdAt, last.id])).toString('base64url') : null,
  };
});
await app.listen({ port: Number(port), host: '127.0.0.1' });
process.send?.('ready');
