import https from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { testCertificate } from '../net/test-certificate.ts';

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
