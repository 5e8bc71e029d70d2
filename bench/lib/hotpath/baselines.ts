// The baselines of bench/hotpath.ts as plain-Node ES modules (run with `node --input-type=module -e`, from the
// repository root so `fastify` and `pg` resolve to the project's own copies): no tsx, no transform hooks, so
// start-up and throughput are what the framework and the driver cost on their own.

/** Bare Fastify answering {ok:true}: the ceiling for any authenticated endpoint. argv: port. */
export const BARE = `
import Fastify from 'fastify';
const app = Fastify({ logger: false });
app.get('/ok', async () => ({ ok: true }));
await app.listen({ port: Number(process.argv[1]), host: '127.0.0.1' });
`;

/** Fastify + pg: the API's list query, shaped as the API shapes it. argv: port, url, orgId. */
export const PG_LIST = `
import Fastify from 'fastify';
import pg from 'pg';
const [port, url, orgId] = process.argv.slice(1);
const pool = new pg.Pool({ connectionString: url, max: 10 });
const app = Fastify({ logger: false });
app.get('/assets', async () => {
  const { rows } = await pool.query(
    'SELECT id, nickname, "customerAssetNumber", "assetClass", vin, serial, "meterType", "meterUnit", ' +
      '"lifecycleStatus", "yardId", "createdAt", "updatedAt" FROM assets WHERE "orgId" = $1 ' +
      'ORDER BY "createdAt" DESC, id DESC LIMIT 51',
    [orgId],
  );
  const page = rows.slice(0, 50).map((r) => ({
    ...r,
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
`;

/**
 * Fastify + pg: POST /hours's common path (read the asset with the project check, then the one guarded statement
 * that moves the meter, inserts the log and queues hours.logged), the API's own SQL passed in.
 * argv: port, url, orgId, actorId, JSON [assetSql, recordSql].
 */
export const PG_HOURS = `
import Fastify from 'fastify';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
const [port, url, orgId, actorId, sqlJson] = process.argv.slice(1);
const [ASSET_SQL, RECORD_SQL] = JSON.parse(sqlJson);
const pool = new pg.Pool({ connectionString: url, max: 10 });
const app = Fastify({ logger: false });
app.post('/hours', async (req, reply) => {
  const { assetId, hoursReading } = req.body;
  const { rows: [a] } = await pool.query({ name: 'a', text: ASSET_SQL, values: [assetId, orgId, null, hoursReading] });
  if (!a) return reply.code(422).send({ ok: false });
  const now = new Date();
  const delta = a.lastMeterReading == null ? 0 : Math.round((hoursReading - a.lastMeterReading) * 1e6) / 1e6;
  const id = randomUUID();
  const eventId = randomUUID();
  const payload = { logId: id, assetId, hoursReading, delta, state: null, projectId: null, reviewStatus: 'NONE',
    reviewReason: null, loggedById: actorId, loggedAt: now.toISOString(), autoFlagId: null, source: 'api',
    sourceId: null };
  const params = [id, orgId, assetId, null, actorId, null, hoursReading, delta, null, null, null, null, null, null,
    null, null, 'NONE', null, null, now, true, eventId, 'hours.logged',
    JSON.stringify(payload), 'api', null,
    a.meterType, a.meterUnit, a.lastMeterReading, a.lastMeterAt, a.pmInterval, a.pmBaselineReading];
  const { rows: [row] } = await pool.query({ name: 'r', text: RECORD_SQL, values: params });
  if (!row) return reply.code(409).send({ ok: false }); // the asset changed meanwhile (the API then takes the lock)
  return reply.code(201).send({ ok: true, logId: row.id, autoFlagId: null, delta, reviewStatus: 'NONE', replayed: false });
});
await app.listen({ port: Number(port), host: '127.0.0.1' });
`;

/**
 * The floor under GET /me: plain Fastify sending /me's exact answer (its headers and body, captured from the API
 * and passed in) as a static string, with nothing the API computes. argv: port, mode, answer (json). Mode
 * `answer`: nothing else. Mode `framework`: also what the API's Fastify instance carries for every request before
 * any of its own checks run: the API's logger (level warn, its lazy request loggers and access-log controller),
 * UUID request ids, and as many hooks as /me passes through, empty (four onRequest, one preValidation, one
 * onResponse). Runs from the repository root after `npm run build` (it imports dist/).
 */
export const FLOOR = `
import Fastify from 'fastify';
import { randomUUID } from 'node:crypto';
const [port, mode, answer] = process.argv.slice(1);
const { headers, body } = JSON.parse(answer);
let options = { logger: false };
if (mode === 'framework') {
  const { createLogger, lazyChildLoggerFactory } = await import('./dist/logger.js');
  const { AccessLogController } = await import('./dist/http/access-log.js');
  const logger = createLogger('warn');
  options = {
    loggerInstance: logger,
    childLoggerFactory: lazyChildLoggerFactory,
    logController: new AccessLogController(logger),
    genReqId: () => randomUUID(),
  };
}
const app = Fastify(options);
if (mode === 'framework') {
  for (let i = 0; i < 4; i++) app.addHook('onRequest', (_request, _reply, done) => done());
  app.addHook('preValidation', (_request, _reply, done) => done());
  app.addHook('onResponse', (_request, _reply, done) => done());
}
app.get('/me', (_request, reply) => {
  reply.headers(headers).type('application/json; charset=utf-8').send(body);
});
await app.listen({ port: Number(port), host: '127.0.0.1' });
`;
