/**
 * What an operator of the Compose stack meets: one address for every replica (only the proxy
 * publishes a fixed port; replicas get ephemeral loopback ones, so `--scale api=N` needs no host port range),
 * and no anonymous volumes that replaced containers would leave behind. CI validates the file with a compose
 * client (.ci/run) and starts the proxy from the image layout (scripts/verify-image.mjs); this checks the layout
 * of the file.
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
  it('one address: only the proxy publishes a fixed port; replicas get ephemeral loopback ports (no range)', () => {
    expect(compose.services.proxy.ports).toEqual(['${API_PORT:-3000}:3000']);
    // 'IP::container' = a host port Compose picks per replica: scaling needs no range and never clashes.
    expect(compose.services.api.ports).toEqual(['127.0.0.1::3000']);
    const fixed = Object.entries(compose.services).filter(([, s]) =>
      s.ports?.some((p) => !p.startsWith('127.0.0.1::')),
    );
    expect(fixed.map(([name]) => name)).toEqual(['proxy']);
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
