/**
 * What an operator of the Compose stack meets (issue 25): one address for every replica (only the proxy
 * publishes a port, a single one, so `--scale api=N` needs no host port range), and no anonymous volumes
 * that replaced containers would leave behind. CI validates the file with a compose client (.ci/run) and
 * starts the proxy from the image layout (scripts/verify-image.mjs); this checks the layout of the file.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
type Service = {
  ports?: string[];
  volumes?: string[];
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: unknown;
};
const compose = parse(readFileSync(`${ROOT}docker-compose.yml`, 'utf8')) as {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
};
const dockerfile = readFileSync(`${ROOT}Dockerfile`, 'utf8');

describe('docker-compose.yml and the Dockerfile', () => {
  it('only the proxy publishes a port, and a single one (no range)', () => {
    const publishing = Object.entries(compose.services).filter(([, s]) => s.ports?.length);
    expect(publishing.map(([name]) => name)).toEqual(['proxy']);
    const [mapping] = compose.services.proxy.ports!;
    expect(compose.services.proxy.ports).toHaveLength(1);
    expect(mapping).toBe('${API_PORT:-3000}:3000');
  });

  it('the proxy runs from the same image in front of every replica of api, which trusts it for X-Forwarded-For', () => {
    const { proxy, api } = compose.services;
    expect(proxy.command).toEqual(['node', 'dist/proxy/main.js']);
    expect(proxy.environment?.PROXY_UPSTREAM).toBe(`api:${api.environment?.PORT}`);
    expect(api.environment?.TRUST_PROXY).toBe('${TRUST_PROXY:-uniquelocal}');
  });

  it('no anonymous volumes: the image declares none, and every mount in the file names its volume', () => {
    expect(dockerfile).not.toMatch(/^\s*VOLUME\b/m);
    for (const [name, service] of Object.entries(compose.services)) {
      for (const mount of service.volumes ?? []) {
        const source = mount.split(':')[0];
        expect(Object.keys(compose.volumes ?? {}), `${name} mounts ${mount}`).toContain(source);
      }
    }
  });
});
