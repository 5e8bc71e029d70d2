// A webhook receiver that verifies every delivery with the SDK before trusting it.
//
// With a secret you already have (comma-separate two while you rotate):
//   FLEET_WEBHOOK_SECRET=whsec_... PORT=4000 TLS_CERT=cert.pem TLS_KEY=key.pem npx tsx examples/webhook-receiver.ts
// Or let it subscribe itself (and unsubscribe on Ctrl-C):
//   FLEET_API_KEY=flt_... FLEET_BASE_URL=http://localhost:3000 PORT=4000 TLS_CERT=cert.pem TLS_KEY=key.pem \
//     npx tsx examples/webhook-receiver.ts
// The API delivers only to https:// URLs; without TLS_CERT/TLS_KEY it serves plain HTTP for use behind a
// TLS-terminating proxy. Prints one JSON line per request.
import { readFileSync } from 'node:fs';
import { createServer as createHttp, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttps } from 'node:https';
import type { AddressInfo } from 'node:net';
import { FleetClient, verifyWebhook, WebhookVerificationError, type WebhookEvent } from '@fleet-ops/sdk';

const env = process.env;
const tls = env.TLS_CERT && env.TLS_KEY ? { cert: readFileSync(env.TLS_CERT), key: readFileSync(env.TLS_KEY) } : null;
let secrets = (env.FLEET_WEBHOOK_SECRET ?? '').split(',').filter(Boolean);
const seen = new Set<string>(); // delivery ids already handled: retries and resends reuse the id

function handle(event: WebhookEvent): string {
  // `event.event` narrows `event.data` to that event's payload.
  switch (event.event) {
    case 'tool.low_stock':
      return `${event.data.name}: ${event.data.newStockLevel} left (threshold ${event.data.thresholdUsed})`;
    case 'asset.created':
      return `new ${event.data.assetClass} asset ${event.data.nickname}`;
    case 'flag.created':
      return `${event.data.severity} flag on ${event.data.assetNickname}`;
    default:
      return event.event; // every other type, including ones newer than this SDK
  }
}

async function onRequest(req: IncomingMessage, res: ServerResponse) {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const rawBody = Buffer.concat(chunks); // the exact bytes: never verify a re-serialised body
  try {
    const event = await verifyWebhook(rawBody, req.headers, secrets);
    const duplicate = seen.has(event.id);
    seen.add(event.id);
    if (seen.size > 10_000) seen.delete(seen.values().next().value!);
    res.writeHead(204).end(); // answer fast (within 10 s), then do the work
    console.log(
      JSON.stringify({ verified: true, duplicate, id: event.id, event: event.event, summary: handle(event) }),
    );
  } catch (err) {
    const reason = err instanceof WebhookVerificationError ? err.reason : 'error';
    res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: reason }));
    console.log(JSON.stringify({ verified: false, reason, message: (err as Error).message }));
  }
}

const server = tls ? createHttps(tls, onRequest) : createHttp(onRequest);
await new Promise<void>((resolve) => server.listen(Number(env.PORT ?? 4000), env.HOST ?? '127.0.0.1', resolve));
const port = (server.address() as AddressInfo).port;
const url = env.WEBHOOK_PUBLIC_URL ?? `${tls ? 'https' : 'http'}://localhost:${port}/hooks`;

let unsubscribe: (() => Promise<unknown>) | undefined;
if (!secrets.length) {
  if (!env.FLEET_API_KEY) throw new Error('Set FLEET_WEBHOOK_SECRET, or FLEET_API_KEY to subscribe automatically');
  const client = new FleetClient({ apiKey: env.FLEET_API_KEY, baseUrl: env.FLEET_BASE_URL ?? 'http://localhost:3000' });
  const events = env.WEBHOOK_EVENTS?.split(',') ?? ['asset.created', 'flag.created', 'tool.low_stock'];
  const sub = await client.webhooks.create({ url, events, description: 'SDK example receiver' });
  secrets = [sub.secret];
  unsubscribe = () => client.webhooks.delete(sub.subscriptionId);
  console.log(JSON.stringify({ subscribed: sub.subscriptionId, events }));
}
console.log(JSON.stringify({ listening: url }));

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    await unsubscribe?.().catch((err) => console.error(`could not unsubscribe: ${err}`));
    server.close();
    process.exit(0);
  });
}
