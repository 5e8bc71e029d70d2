import { randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** One entry of SECRETS_ENCRYPTION_KEYS: an id recorded in every ciphertext, and 32 bytes of AES-256 key. */
export interface EncryptionKey {
  id: string;
  key: Buffer;
}

/** The keys a process holds: the first encrypts, every one decrypts what it encrypted. */
export interface Keyring {
  primary: EncryptionKey;
  get(id: string): Buffer | undefined;
  ids: string[];
}

/** How to make a key, in every message about a missing or malformed one. */
export const KEY_HINT = `generate one with: node -e "console.log('k1:'+require('crypto').randomBytes(32).toString('base64'))"`;

export const KEY_FILE_NAME = 'secrets.key';
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

/**
 * `id:base64key[,id:base64key...]`; returns the keys or the reason the text is not such a list (never
 * quoting the key material).
 */
export function parseEncryptionKeys(text: string): EncryptionKey[] | string {
  const entries = text
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (entries.length === 0) return `must hold at least one id:base64key entry; ${KEY_HINT}`;
  const keys: EncryptionKey[] = [];
  for (const [n, entry] of entries.entries()) {
    const colon = entry.indexOf(':');
    const id = colon < 0 ? '' : entry.slice(0, colon);
    const material = colon < 0 ? '' : entry.slice(colon + 1);
    const key = Buffer.from(material, 'base64');
    const where = `entry ${n + 1}${KEY_ID.test(id) ? ` ("${id}")` : ''}`;
    if (!KEY_ID.test(id)) return `${where} must be id:base64key with an id of letters, digits, - or _; ${KEY_HINT}`;
    if (key.length !== 32 || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(material))
      return `${where} must be base64 of exactly 32 bytes; ${KEY_HINT}`;
    if (keys.some((k) => k.id === id)) return `${where}: the id "${id}" is used twice`;
    keys.push({ id, key });
  }
  return keys;
}

export function createKeyring(keys: EncryptionKey[]): Keyring {
  if (keys.length === 0) throw new Error('a keyring needs at least one key');
  const byId = new Map(keys.map((k) => [k.id, k.key]));
  return { primary: keys[0], get: (id) => byId.get(id), ids: keys.map((k) => k.id) };
}

export class SecretKeyError extends Error {}

interface KeySource {
  /** Parsed SECRETS_ENCRYPTION_KEYS (empty when unset). */
  configured: EncryptionKey[];
  database: 'postgresql' | 'pglite';
  dataDir: string;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

/**
 * The keyring of a server or admin process. PostgreSQL: SECRETS_ENCRYPTION_KEYS, required (every instance
 * must hold the same keys, so a key made up by one of them would be wrong). Embedded database (one process by
 * construction): SECRETS_ENCRYPTION_KEYS when set, otherwise DATA_DIR/secrets.key, created on first start with
 * mode 0600. When both exist, the variable's keys come first (the first one encrypts) and the file's key still
 * decrypts, so moving to the variable needs nothing but `admin secrets rotate-key`.
 */
export function resolveKeyring({ configured, database, dataDir, log }: KeySource): Keyring {
  if (database === 'postgresql') {
    if (configured.length === 0)
      throw new SecretKeyError(
        `SECRETS_ENCRYPTION_KEYS is required with DATABASE_URL (webhook signing secrets are encrypted with it): ${KEY_HINT}`,
      );
    return createKeyring(configured);
  }
  if (dataDir.startsWith('memory://')) {
    // An in-memory database dies with the process: so may its key.
    return createKeyring(configured.length ? configured : [{ id: 'memory', key: randomBytes(32) }]);
  }
  const file = path.resolve(dataDir, KEY_FILE_NAME);
  const fromFile = readKeyFile(file, configured.length === 0, log);
  if (configured.length === 0) return createKeyring([fromFile!]);
  if (!fromFile) return createKeyring(configured);
  const same = configured.find((k) => k.id === fromFile.id);
  if (same && !same.key.equals(fromFile.key))
    throw new SecretKeyError(`the key id "${fromFile.id}" of ${file} is in SECRETS_ENCRYPTION_KEYS with other bytes`);
  if (!same) log.info({ keyFile: file }, 'the key file still decrypts beside SECRETS_ENCRYPTION_KEYS');
  return createKeyring(same ? configured : [...configured, fromFile]);
}

/** Reads the key file; creates it (exclusively, mode 0600) when missing and `create` is set. */
function readKeyFile(file: string, create: boolean, log: KeySource['log']): EncryptionKey | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    if (!create) return null;
    const key = { id: 'local', key: randomBytes(32) };
    writeFileSync(file, `${key.id}:${key.key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
    chmodSync(file, 0o600); // whatever the umask
    log.warn(
      { keyFile: file },
      `created the encryption key of webhook signing secrets at ${file}: back it up, and keep it apart from copies of the database`,
    );
    return key;
  }
  const parsed = parseEncryptionKeys(text.trim());
  if (typeof parsed === 'string') throw new SecretKeyError(`${file}: ${parsed}`);
  if ((statSync(file).mode & 0o077) !== 0)
    log.warn({ keyFile: file }, 'the key file is readable by other users: chmod 600 it');
  return parsed[0];
}

/**
 * The keyring for in-process uses that never read the key file (tests, the contracts script): the configured
 * keys; on the embedded database a key made up for this process when none is configured. main.ts and the
 * admin CLI resolve the real one with resolveKeyring and pass it in.
 */
export function keyringFromConfig(configured: EncryptionKey[], database: 'postgresql' | 'pglite'): Keyring {
  if (configured.length === 0 && database === 'postgresql')
    throw new SecretKeyError(`SECRETS_ENCRYPTION_KEYS is required on PostgreSQL: ${KEY_HINT}`);
  return createKeyring(configured.length ? configured : [{ id: 'memory', key: randomBytes(32) }]);
}
