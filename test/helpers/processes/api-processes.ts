/** The processes and the HTTPS receiver of the multi-instance operations test (multi-instance.test.ts). */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { fileURLToPath } from 'node:url';
import selfsigned from 'selfsigned';
import { nodeArgs } from './node-process.ts';
import { TEST_SECRETS_KEYS } from '../run/test-env.ts';

export const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined;
export const REDIS_URL = process.env.REDIS_TEST_URL ?? 'redis://127.0.0.1:6379';
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------- processes

export interface ApiProcess {
  name: string;
  port: number;
  base: string;
  pid: number;
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  alive(): boolean;
  /** Last lines the process wrote (LOG_LEVEL=warn: warnings and errors only). */
  output(): string;
}

export const children: ApiProcess[] = [];
export const killAllNow = () => {
  for (const p of children) if (p.alive()) p.child.kill('SIGKILL');
};

/** Distinct free high ports chosen by the kernel (held together so they cannot repeat). */
export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<net.Server>((resolve) => {
          const s = net.createServer();
          s.listen(0, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

export async function startApi(name: string, port: number, env: Record<string, string>): Promise<ApiProcess> {
  const child = spawn(process.execPath, nodeArgs('src/main.ts'), {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      SECRETS_ENCRYPTION_KEYS: TEST_SECRETS_KEYS,
      HOME: process.env.HOME ?? os.tmpdir(),
      TMPDIR: os.tmpdir(),
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-20_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const proc: ApiProcess = {
    name,
    port,
    base: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    child,
    exited,
    alive: () => child.exitCode === null && child.signalCode === null,
    output: () => tail,
  };
  children.push(proc);
  const until = Date.now() + 90_000;
  for (;;) {
    if (!proc.alive()) throw new Error(`${name} exited during start-up:\n${tail}`);
    try {
      if ((await fetch(`${proc.base}/api/v1/health`, { signal: AbortSignal.timeout(2_000) })).ok) return proc;
    } catch {
      // not listening yet
    }
    if (Date.now() > until) throw new Error(`${name} did not become healthy in 90 s:\n${tail}`);
    await sleep(200);
  }
}

/** SIGTERM, then SIGKILL if it has not exited after `graceMs`. */
export async function stopApi(p: ApiProcess, graceMs = 10_000) {
  if (p.alive()) {
    p.child.kill('SIGTERM');
    const timer = setTimeout(() => p.alive() && p.child.kill('SIGKILL'), graceMs);
    await p.exited;
    clearTimeout(timer);
  }
  return p.exited;
}

export interface CallResult {
  status: number;
  headers: Headers;
  json: any;
}

export async function call(
  p: ApiProcess,
  method: string,
  url: string,
  key?: string,
  body?: unknown,
): Promise<CallResult> {
  const res = await fetch(`${p.base}${url}`, {
    method,
    headers: {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, headers: res.headers, json };
}

// ---------------------------------------------------------------------------------------------- receiver

export interface Hit {
  path: string;
  id: string;
  event: string;
  assetId: string | undefined;
  /** The API process that sent it (undefined when the OS cannot tell). */
  pid: number | undefined;
  at: number;
}

export interface Receiver {
  origin: string;
  caFile: string;
  hits: Hit[];
  /** Called for every request before answering; returns the delay of the 200 answer in ms. */
  onHit: (hit: Hit) => number;
  /** False when the sending process could not be identified for some request. */
  ownersKnown(): boolean;
  close(): Promise<void>;
}

/** The local port of a client socket → the pid (among `pids`) holding it, from /proc. Linux only. */
export function socketOwner(clientPort: number, pids: number[]): number | undefined {
  const inodes = new Set<string>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10) continue;
      if (parseInt(cols[1].split(':').pop()!, 16) === clientPort) inodes.add(cols[9]);
    }
  }
  if (inodes.size === 0) return undefined;
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m && inodes.has(m[1])) return pid;
      } catch {
        // fd closed meanwhile
      }
    }
  }
  return undefined;
}

/** HTTPS receiver with its own self-signed certificate (trusted by the API processes through WEBHOOK_CA_FILE). */
export async function startReceiver(): Promise<Receiver> {
  const pems = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], {
    keySize: 2048,
    algorithm: 'sha256',
  });
  const caFile = path.join(os.tmpdir(), `fleet-multi-ca-${randomBytes(6).toString('hex')}.pem`);
  writeFileSync(caFile, pems.cert);
  const owners = new WeakMap<object, number | undefined>();
  let unknownOwners = 0;
  const receiver = { caFile, hits: [] as Hit[], onHit: () => 0 } as unknown as Receiver;
  const server = https.createServer({ cert: pems.cert, key: pems.private }, (req, res) => {
    const socket = req.socket as TLSSocket;
    // Identify the sender while its socket is certainly open (at its first request).
    if (!owners.has(socket)) {
      const pid = socketOwner(
        socket.remotePort ?? -1,
        children.filter((c) => c.alive()).map((c) => c.pid),
      );
      owners.set(socket, pid);
      if (pid === undefined) unknownOwners++;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let json: any = {};
      try {
        json = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        // recorded with empty fields
      }
      const hit: Hit = {
        path: req.url ?? '/',
        id: json.id,
        event: json.event,
        assetId: json.data?.assetId,
        pid: owners.get(socket),
        at: Date.now(),
      };
      receiver.hits.push(hit);
      const delay = receiver.onHit(hit);
      const answer = () => {
        if (!res.destroyed) res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      };
      if (delay > 0) setTimeout(answer, delay);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(receiver, {
    origin: `https://localhost:${(server.address() as AddressInfo).port}`,
    ownersKnown: () => unknownOwners === 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

export async function waitFor(what: string, check: () => Promise<boolean> | boolean, ms: number, everyMs = 250) {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`${what}: not reached within ${Math.round(ms / 1000)} s`);
    await sleep(everyMs);
  }
}

// ---------------------------------------------------------------------------------------------- the test
