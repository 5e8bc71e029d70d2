import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pino from 'pino';
import selfsigned from 'selfsigned';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { createDeps, type AppDeps } from '../../src/composition.ts';
import { loadConfig } from '../../src/config.ts';
import type { Database } from '../../src/db/database.ts';
import { apiClient } from '../helpers/app.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  json: any;
}

export interface Reply {
  status?: number;
  body?: string;
  headers?: Record<string, string>;
  delayMs?: number;
  /** Resets the connection instead of answering. */
  reset?: boolean;
}

export interface Receiver {
  /** https://localhost:<port> */
  origin: string;
  port: number;
  /** PEM file with the receiver's self-signed certificate, to pass as WEBHOOK_CA_FILE. */
  caFile: string;
  requests: ReceivedRequest[];
  /** Decides each answer; defaults to 200 "ok". */
  respond: (req: ReceivedRequest) => Reply;
  close(): Promise<void>;
}

let certificate: Promise<{ cert: string; key: string; caFile: string }> | undefined;

/** One self-signed certificate for localhost / 127.0.0.1 per test process, trusted only via WEBHOOK_CA_FILE. */
function testCertificate() {
  certificate ??= selfsigned
    .generate([{ name: 'commonName', value: 'localhost' }], { keySize: 2048, algorithm: 'sha256' })
    .then((pems) => {
      const caFile = path.join(os.tmpdir(), `fleet-webhook-ca-${randomBytes(6).toString('hex')}.pem`);
      writeFileSync(caFile, pems.cert);
      return { cert: pems.cert, key: pems.private, caFile };
    });
  return certificate;
}

/** A real HTTPS receiver on loopback that records every request with its raw body. */
export async function startReceiver(): Promise<Receiver> {
  const { cert, key, caFile } = await testCertificate();
  const requests: ReceivedRequest[] = [];
  const receiver = { requests, respond: (() => ({})) as Receiver['respond'] } as Receiver;
  const server = https.createServer({ cert, key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      let json: unknown = null;
      try {
        json = JSON.parse(rawBody.toString('utf8'));
      } catch {
        // recorded as null
      }
      const received: ReceivedRequest = { path: req.url ?? '/', headers: req.headers, rawBody, json };
      requests.push(received);
      const reply = receiver.respond(received);
      if (reply.reset) return void req.socket.destroy();
      const answer = () => {
        if (res.destroyed) return;
        res.writeHead(reply.status ?? 200, { 'content-type': 'text/plain; charset=utf-8', ...reply.headers });
        res.end(reply.body ?? 'ok');
      };
      if (reply.delayMs) setTimeout(answer, reply.delayMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(receiver, {
    origin: `https://localhost:${port}`,
    port,
    caFile,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

type Verify = (rawBody: Buffer | string, headers: Record<string, unknown>, secret: string, nowSec?: number) => boolean;

/**
 * The receiver-side verifier exactly as published: the first ```js block after the "Verifying signatures"
 * heading of the webhook docs (or the README, once the notes are merged there), loaded as a module.
 */
export async function loadPublishedVerifier(): Promise<{ verifyWebhook: Verify; source: string }> {
  const candidates = ['docs/api-notes/webhooks.md', 'README.md'].map((f) => path.join(ROOT, f)).filter(existsSync);
  for (const file of candidates) {
    const text = readFileSync(file, 'utf8');
    const at = text.search(/^#+ Verifying signatures/m);
    if (at < 0) continue;
    const block = /```js\n([\s\S]*?)```/.exec(text.slice(at));
    if (!block) continue;
    const module = path.join(os.tmpdir(), `fleet-verify-${randomBytes(6).toString('hex')}.mjs`);
    writeFileSync(module, block[1]);
    const loaded = (await import(pathToFileURL(module).href)) as { verifyWebhook: Verify };
    return { verifyWebhook: loaded.verifyWebhook, source: block[1] };
  }
  throw new Error('no "Verifying signatures" section with a ```js block in the webhook docs');
}

export const silentLogger = () => pino({ level: 'silent' }) as unknown as FastifyBaseLogger;

/** A full app (one "process") on an existing database; close() leaves the database open. */
export async function appOn(db: Database, env: Record<string, string> = {}) {
  const config = loadConfig({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', LOG_LEVEL: 'silent', ...env });
  const deps: AppDeps = createDeps(config, db, silentLogger());
  const app: FastifyInstance = await buildApp(deps);
  await app.ready();
  return {
    app,
    deps,
    api: apiClient(app),
    async close() {
      await app.close();
      await deps.close();
    },
  };
}

/** Polls until `check` is true (for background work), failing after `ms`. */
export async function eventually(check: () => Promise<boolean> | boolean, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
