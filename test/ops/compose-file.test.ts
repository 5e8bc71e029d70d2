/**
 * What an operator of the Compose stack meets: one address for every replica, served by a stock Caddy 2 with the
 * repository's Caddyfile (replicas found by name, so `--scale api=N` needs no change), replicas that publish no
 * port and trust forwarded headers from the Compose network only, a drain longer than Caddy's keep-alive, and no
 * anonymous volumes that replaced containers would leave behind. CI validates the file with a compose client;
 * this checks the layout of the files.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
type Service = {
  image?: string;
  build?: unknown;
  ports?: string[];
  volumes?: string[];
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: unknown;
  stop_grace_period?: string;
};
const compose = parse(readFileSync(`${ROOT}docker-compose.yml`, 'utf8')) as {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
};
const dockerfile = readFileSync(`${ROOT}Dockerfile`, 'utf8');
const caddyfile = readFileSync(`${ROOT}Caddyfile`, 'utf8');
/** A Caddyfile duration such as `2s` or `100ms`, in milliseconds. */
const ms = (d: string) => Number.parseFloat(d) * (d.endsWith('ms') ? 1 : d.endsWith('m') ? 60_000 : 1000);
const setting = (name: string) => caddyfile.match(new RegExp(`^\\s*${name}\\s+(\\S+)\\s*$`, 'm'))?.[1];

describe('docker-compose.yml, the Caddyfile and the Dockerfile', () => {
  it('the edge is a stock Caddy 2 with the repository Caddyfile; no proxy of our own is left', () => {
    const { caddy } = compose.services;
    expect(caddy.image).toBe('caddy:2');
    expect(caddy.build).toBeUndefined();
    expect(caddy.volumes).toContain('./Caddyfile:/etc/caddy/Caddyfile:ro');
    // Certificates outlive the container (automatic HTTPS with a domain in SITE_ADDRESS).
    expect(caddy.volumes).toContain('caddy_data:/data');
    expect(caddy.environment?.SITE_ADDRESS).toBe('${SITE_ADDRESS:-:3000}');
    expect(caddyfile).toMatch(/^\{\$SITE_ADDRESS::3000\} \{$/m);
    expect(Object.keys(compose.services).sort()).toEqual(['api', 'caddy', 'postgres', 'redis']);
    expect(existsSync(`${ROOT}src/proxy`)).toBe(false);
    expect(JSON.stringify(compose)).not.toMatch(/dist\/proxy|PROXY_UPSTREAM/);
  });

  it('one address: only Caddy publishes ports; the replicas publish none', () => {
    expect(compose.services.caddy.ports?.[0]).toBe('${API_PORT:-3000}:3000');
    const publishing = Object.entries(compose.services).filter(([, s]) => s.ports?.length);
    expect(publishing.map(([name]) => name)).toEqual(['caddy']);
  });

  it('Caddy finds every replica of api by name; a request with a body is never retried, its dial tries each', () => {
    const { api } = compose.services;
    // Reads: round robin over the replicas found by name; a refused one is retried on another.
    expect(caddyfile).toMatch(/^\s*@read method GET HEAD OPTIONS$/m);
    expect(caddyfile).toMatch(/dynamic a \{\s*name \{\$API_UPSTREAM_NAME:api\}\s*port \{\$API_UPSTREAM_PORT:3000\}/);
    // The rest: one upstream, the name, so a refused address is passed over within the dial (Caddy 2.6 would
    // retry on another replica with the body already lost).
    expect(caddyfile).toMatch(/^\s*reverse_proxy \{\$API_UPSTREAM_NAME:api\}:\{\$API_UPSTREAM_PORT:3000\} \{$/m);
    expect(api.environment?.PORT).toBe('3000');
    expect(ms(setting('lb_try_duration') ?? '0')).toBeGreaterThan(ms(setting('dial_timeout') ?? 'x'));
    expect(caddyfile).toMatch(/^\s*log \{\s*output stdout\s*format json\s*\}/m);
    expect(setting('max_size')).toBeDefined();
    for (const t of ['read_header', 'read_body', 'write', 'idle']) expect(setting(t), t).toBeDefined();
  });

  it('the edge lets uploads up to ATTACHMENT_MAX_BYTES through and caps every other body at 2 MB', () => {
    const bytes = (size: string) =>
      Number.parseFloat(size) * (/MiB$/.test(size) ? 2 ** 20 : /MB$/.test(size) ? 1e6 : /KB$/.test(size) ? 1e3 : 1);
    const caps = [...caddyfile.matchAll(/request_body (@\w+) \{\s*max_size (\S+)\s*\}/g)].map(([, m, size]) => ({
      matcher: m,
      size: size.replace(/^\{\$UPLOAD_MAX_SIZE:(.+)\}$/, '$1'),
    }));
    expect(caps.map((c) => c.matcher)).toEqual(['@upload', '@not_upload']);
    const maxBytes = Number(compose.services.api.environment?.ATTACHMENT_MAX_BYTES?.match(/:-(\d+)\}/)?.[1]);
    // The multipart framing and form fields around the file fit in the difference.
    expect(bytes(caps[0].size)).toBeGreaterThan(maxBytes + 64 * 1024);
    expect(bytes(caps[1].size)).toBe(2e6);
    for (const route of ['/api/v1/attachments', '/api/v1/attachments/uploads/*'])
      expect(caddyfile.match(/@upload \{[^}]*\}/)?.[0]).toContain(route);
  });

  it('a stopping replica drains for longer than Caddy keeps an idle connection, within the stop grace period', () => {
    const { api } = compose.services;
    const drain = Number(api.environment?.SHUTDOWN_DRAIN_MS?.match(/:-(\d+)\}/)?.[1]);
    const timeout = Number(api.environment?.SHUTDOWN_TIMEOUT_MS?.match(/:-(\d+)\}/)?.[1]);
    expect(drain).toBeGreaterThan(ms(setting('keepalive') ?? 'x'));
    expect(2 * drain).toBeLessThan(timeout); // the drain takes up to twice its length
    expect(timeout).toBeLessThan(ms(api.stop_grace_period ?? '0'));
  });

  it('the api trusts X-Forwarded-For from the private network only (where Caddy is)', () => {
    expect(compose.services.api.environment?.TRUST_PROXY).toBe('${TRUST_PROXY:-uniquelocal}');
    // Caddy 2.6+ replaces a client's X-Forwarded-For unless told to trust it: nothing here tells it to.
    expect(caddyfile).not.toMatch(/trusted_proxies|header_up\s+X-Forwarded-For/);
  });

  it('no anonymous volumes: the image declares none, and every named mount in the file names its volume', () => {
    expect(dockerfile).not.toMatch(/^\s*VOLUME\b/m);
    for (const [name, service] of Object.entries(compose.services)) {
      for (const mount of service.volumes ?? []) {
        const source = mount.split(':')[0];
        if (source.startsWith('./')) continue; // a file of the repository (the Caddyfile)
        expect(Object.keys(compose.volumes ?? {}), `${name} mounts ${mount}`).toContain(source);
      }
    }
  });
});
