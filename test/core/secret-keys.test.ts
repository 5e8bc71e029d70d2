import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { KEY_FILE_NAME, parseEncryptionKeys, resolveKeyring, SecretKeyError } from '../../src/core/secret-keys.ts';
import { nodeArgs } from '../helpers/processes/node-process.ts';

const b64 = () => randomBytes(32).toString('base64');
const logs: string[] = [];
const log = { info: (_o: object, m: string) => logs.push(m), warn: (_o: object, m: string) => logs.push(m) };
const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'fleet-keys-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  logs.length = 0;
});

describe('SECRETS_ENCRYPTION_KEYS', () => {
  it('takes id:base64key entries, comma separated; the first one encrypts', () => {
    const [a, b] = [b64(), b64()];
    const keys = loadConfig({ SECRETS_ENCRYPTION_KEYS: `k2:${a}, k1:${b}` }).secretsEncryptionKeys;
    expect(keys.map((k) => k.id)).toEqual(['k2', 'k1']);
    expect(keys[0].key.equals(Buffer.from(a, 'base64'))).toBe(true);
    expect(loadConfig({}).secretsEncryptionKeys).toEqual([]);
  });

  it.each([
    ['k1', 'entry 1 must be id:base64key'],
    [`k1:${randomBytes(16).toString('base64')}`, 'entry 1 ("k1") must be base64 of exactly 32 bytes'],
    [`k1:${b64()},bad id:${b64()}`, 'entry 2 must be id:base64key'],
    [`k1:${b64()},k1:${b64()}`, 'the id "k1" is used twice'],
    [`k1:not base64 at all!!`, 'exactly 32 bytes'],
  ])('rejects %j with the reason and how to generate a key, never quoting the key', (value, reason) => {
    const message = (parseEncryptionKeys(value) as string) ?? '';
    expect(message).toContain(reason);
    if (!reason.includes('twice')) expect(message).toContain("randomBytes(32).toString('base64')");
    expect(() => loadConfig({ SECRETS_ENCRYPTION_KEYS: value })).toThrow(/SECRETS_ENCRYPTION_KEYS: /);
    const material = value.split(',')[0].split(':')[1];
    if (material) expect(message).not.toContain(material);
  });
});

describe('the keyring a process resolves', () => {
  it('PostgreSQL: the variable is required', () => {
    expect(() => resolveKeyring({ configured: [], database: 'postgresql', dataDir: tempDir(), log })).toThrow(
      SecretKeyError,
    );
  });

  it('embedded: creates DATA_DIR/secrets.key (0600) on first start, logs where, and reads it afterwards', () => {
    const dir = tempDir();
    const first = resolveKeyring({ configured: [], database: 'pglite', dataDir: dir, log });
    const file = path.join(dir, KEY_FILE_NAME);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(logs.join('\n')).toContain(file);
    expect(readFileSync(file, 'utf8').trim()).toBe(`local:${first.primary.key.toString('base64')}`);
    const again = resolveKeyring({ configured: [], database: 'pglite', dataDir: dir, log });
    expect(again.primary.key.equals(first.primary.key)).toBe(true);
  });

  it('embedded with the variable set too: its keys come first, the file key still decrypts', () => {
    const dir = tempDir();
    const local = resolveKeyring({ configured: [], database: 'pglite', dataDir: dir, log }).primary;
    const configured = parseEncryptionKeys(`k1:${b64()}`) as { id: string; key: Buffer }[];
    const both = resolveKeyring({ configured, database: 'pglite', dataDir: dir, log });
    expect(both.ids).toEqual(['k1', 'local']);
    expect(both.get('local')!.equals(local.key)).toBe(true);
    const clash = parseEncryptionKeys(`local:${b64()}`) as { id: string; key: Buffer }[];
    expect(() => resolveKeyring({ configured: clash, database: 'pglite', dataDir: dir, log })).toThrow(/other bytes/);
    writeFileSync(path.join(dir, KEY_FILE_NAME), 'garbage');
    expect(() => resolveKeyring({ configured: [], database: 'pglite', dataDir: dir, log })).toThrow(/secrets\.key/);
  });
});

describe('SECRETS_ENCRYPTION_KEYS_FILE (the Compose stack: one file on a volume the replicas share)', () => {
  it('PostgreSQL: created once (0600, an id of its own), then read by every process that names it', () => {
    const file = path.join(tempDir(), 'encryption.keys');
    const first = resolveKeyring({ configured: [], keyFile: file, database: 'postgresql', dataDir: '/unused', log });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(first.primary.id).toMatch(/^f[0-9a-f]{8}$/);
    expect(logs.join('\n')).toContain(file);
    const other = resolveKeyring({ configured: [], keyFile: file, database: 'postgresql', dataDir: '/unused', log });
    expect(other.primary.id).toBe(first.primary.id);
    expect(other.primary.key.equals(first.primary.key)).toBe(true);
  });

  it('holds the variable syntax (every entry is used); the variable, when set, encrypts and the file decrypts', () => {
    const file = path.join(tempDir(), 'encryption.keys');
    writeFileSync(file, `k2:${b64()},k1:${b64()}\n`, { mode: 0o600 });
    expect(resolveKeyring({ configured: [], keyFile: file, database: 'postgresql', dataDir: '', log }).ids).toEqual([
      'k2',
      'k1',
    ]);
    const configured = parseEncryptionKeys(`k3:${b64()}`) as { id: string; key: Buffer }[];
    expect(resolveKeyring({ configured, keyFile: file, database: 'postgresql', dataDir: '', log }).ids).toEqual([
      'k3',
      'k2',
      'k1',
    ]);
  });

  it('a file that cannot be created stops start-up with one clear line', () => {
    const file = path.join(tempDir(), 'missing-dir', 'encryption.keys');
    expect(() => resolveKeyring({ configured: [], keyFile: file, database: 'postgresql', dataDir: '', log })).toThrow(
      /cannot create the key file .*missing-dir/,
    );
  });
});

// Real processes: what an operator sees.
describe('start-up', { timeout: 120_000 }, () => {
  const env = (extra: Record<string, string>) => ({
    PATH: process.env.PATH ?? '',
    PORT: '0',
    HOST: '127.0.0.1',
    ...extra,
  });

  it.each([
    ['without a key', {}, 'SECRETS_ENCRYPTION_KEYS (or SECRETS_ENCRYPTION_KEYS_FILE) is required with DATABASE_URL'],
    [
      'with a malformed key',
      { SECRETS_ENCRYPTION_KEYS: 'k1:c2hvcnQ=' },
      'Invalid configuration: SECRETS_ENCRYPTION_KEYS: entry 1 ("k1") must be base64 of exactly 32 bytes',
    ],
  ])('on PostgreSQL %s stops at once with one line saying how to generate one', (_, extra, reason) => {
    // Nothing listens there: the key is checked before the database is waited for.
    const res = spawnSync(process.execPath, nodeArgs('src/main.ts'), {
      env: env({ DATABASE_URL: 'postgresql://postgres@127.0.0.1:1/none', ...extra }),
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(res.status).toBe(1);
    const lines = res.stderr.trim().split('\n');
    expect(lines, res.stderr).toHaveLength(1);
    expect(lines[0]).toContain(reason);
    expect(lines[0]).toContain(`node -e "console.log('k1:'+require('crypto').randomBytes(32).toString('base64'))"`);
  });

  it('on the embedded database needs no setup: it creates the key file and says where', async () => {
    const dir = tempDir();
    const child = spawn(process.execPath, nodeArgs('src/main.ts'), {
      env: env({ DATA_DIR: dir, LOG_LEVEL: 'info' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    try {
      await new Promise<void>((resolve, reject) => {
        const poll = setInterval(() => {
          if (out.includes('fleet API ready')) resolve();
          if (child.exitCode !== null) reject(new Error(out));
        }, 100);
        child.once('exit', () => clearInterval(poll));
        setTimeout(() => clearInterval(poll), 100_000).unref();
      });
      const file = path.join(path.resolve(dir), KEY_FILE_NAME);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(out).toContain(`created the encryption key of webhook signing secrets at ${file}`);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode === null ? child.once('exit', r) : r(null)));
    }
  });
});
