import net from 'node:net';

export type ProxyMode = 'pass' | 'blackhole' | 'refuse';

/**
 * A TCP proxy for fault injection, placed between the app and a shared service (never stop the
 * service itself). `blackhole` models a network partition: nothing is delivered in either direction,
 * but bytes already sent stay "in flight" and are delivered when the partition heals, as TCP
 * retransmission would. A side that RESETS its socket meanwhile loses its in-flight bytes (as with a
 * real RST); one that closes normally has them delivered, then the close. `refuse` stops listening and
 * resets existing connections: new connections get ECONNREFUSED.
 */
export async function startTcpProxy(target: { host: string; port: number }) {
  let mode: ProxyMode = 'pass';
  let cutWhen: ((chunk: Buffer) => boolean) | null = null;
  const pairs = new Set<Pair>();

  class Pair {
    upstream: net.Socket | null = null;
    toServer: Buffer[] = [];
    toClient: Buffer[] = [];
    clientEnded = false;
    serverEnded = false;
    dead = false;
    constructor(readonly client: net.Socket) {
      pairs.add(this);
      client.on('data', (chunk) => {
        if (mode === 'pass' && cutWhen?.(chunk)) {
          cutWhen = null;
          mode = 'blackhole';
        }
        if (mode === 'pass' && this.upstream && !this.upstream.connecting) this.upstream.write(chunk);
        else this.toServer.push(chunk);
      });
      client.on('end', () => {
        this.clientEnded = true;
        if (mode === 'pass' && this.upstream && this.toServer.length === 0) this.upstream.end();
      });
      client.on('error', () => this.kill());
      client.on('close', () => {
        // A reset (no FIN first) drops what was still in flight.
        if (!this.clientEnded) this.kill();
      });
      if (mode === 'pass') this.connect();
    }
    connect() {
      if (this.upstream || this.dead) return;
      const up = net.connect(target.port, target.host);
      this.upstream = up;
      up.on('connect', () => this.flush());
      up.on('data', (chunk) => {
        if (mode === 'pass') this.client.write(chunk);
        else this.toClient.push(chunk);
      });
      up.on('end', () => {
        this.serverEnded = true;
        if (mode === 'pass' && this.toClient.length === 0) this.client.end();
      });
      up.on('error', () => this.kill());
      up.on('close', () => {
        if (!this.serverEnded) this.kill();
      });
    }
    flush() {
      if (this.dead) return;
      if (!this.upstream) return this.connect();
      if (this.upstream.connecting) return;
      for (const chunk of this.toServer.splice(0)) this.upstream.write(chunk);
      for (const chunk of this.toClient.splice(0)) this.client.write(chunk);
      if (this.clientEnded) this.upstream.end();
      if (this.serverEnded) this.client.end();
    }
    kill() {
      if (this.dead) return;
      this.dead = true;
      this.toServer = [];
      this.toClient = [];
      this.client.resetAndDestroy();
      if (this.upstream) this.upstream.resetAndDestroy();
      pairs.delete(this);
    }
  }

  const server = net.createServer((socket) => new Pair(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;

  return {
    port,
    get mode() {
      return mode;
    },
    async setMode(next: ProxyMode) {
      const previous = mode;
      mode = next;
      if (next === 'refuse') {
        for (const pair of [...pairs]) pair.kill();
        if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
      } else if (previous === 'refuse') {
        await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
      }
      if (next === 'pass') for (const pair of [...pairs]) pair.flush();
    },
    /** Partitions the network the moment the client sends a chunk matching `predicate` (that chunk is in flight). */
    cutWhen(predicate: (chunk: Buffer) => boolean) {
      cutWhen = predicate;
    },
    connections: () => pairs.size,
    async close() {
      for (const pair of [...pairs]) pair.kill();
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type TcpProxy = Awaited<ReturnType<typeof startTcpProxy>>;
