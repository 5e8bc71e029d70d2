import { randomBytes } from 'node:crypto';
import { chmodSync, linkSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
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
  /** SECRETS_ENCRYPTION_KEYS_FILE: a file holding keys in the same syntax (created when missing). */
  keyFile?: string;
  database: 'postgresql' | 'pglite';
  dataDir: string;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

/**
 * The keyring of a server or admin process. Keys come from SECRETS_ENCRYPTION_KEYS and from a key file:
 * SECRETS_ENCRYPTION_KEYS_FILE when set (any engine; the Compose stack shares one on a volume), otherwise on the
 * embedded database DATA_DIR/secrets.key. A key file missing while no key is configured is created (mode 0600).
 * When both hold keys, the variable's come first (the first one encrypts) and the file's still decrypt, so
 * moving from one to the other needs nothing but `admin secrets rotate-key`. PostgreSQL without either is a
 * start-up error: every instance must hold the same keys, so a key one of them made up alone would be wrong.
 */
export function resolveKeyring({ configured, keyFile, database, dataDir, log }: KeySource): Keyring {
  const embeddedFile = database === 'pglite' && !dataDir.startsWith('memory://');
  const file = keyFile ? path.resolve(keyFile) : embeddedFile ? path.resolve(dataDir, KEY_FILE_NAME) : null;
  if (!file) {
    if (database === 'postgresql' && configured.length === 0)
      throw new SecretKeyError(
        `SECRETS_ENCRYPTION_KEYS (or SECRETS_ENCRYPTION_KEYS_FILE) is required with DATABASE_URL (webhook signing secrets are encrypted with it): ${KEY_HINT}`,
      );
    // An in-memory database dies with the process: so may its key.
    return createKeyring(configured.length ? configured : [{ id: 'memory', key: randomBytes(32) }]);
  }
  const fromFile = readKeyFile(file, configured.length === 0, keyFile ? randomKeyId() : 'local', log);
  if (configured.length === 0) return createKeyring(fromFile!);
  if (!fromFile) return createKeyring(configured);
  const extra: EncryptionKey[] = [];
  for (const key of fromFile) {
    const same = configured.find((k) => k.id === key.id);
    if (same && !same.key.equals(key.key))
      throw new SecretKeyError(`the key id "${key.id}" of ${file} is in SECRETS_ENCRYPTION_KEYS with other bytes`);
    if (!same) extra.push(key);
  }
  if (extra.length) log.info({ keyFile: file }, 'the key file still decrypts beside SECRETS_ENCRYPTION_KEYS');
  return createKeyring([...configured, ...extra]);
}

// A file created on one host gets an id of its own: should a second host create another file by mistake, rows
// sealed there say "key <id> missing" here (deliveries wait, nothing is lost) instead of failing to decrypt.
function randomKeyId(): string {
  return `f${randomBytes(4).toString('hex')}`;
}

/** Reads the key file; creates it (mode 0600) when missing and `create` is set. */
function readKeyFile(file: string, create: boolean, newId: string, log: KeySource['log']): EncryptionKey[] | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    if (!create) return null;
    let created: boolean;
    try {
      created = createKeyFile(file, { id: newId, key: randomBytes(32) });
    } catch (cause) {
      throw new SecretKeyError(`cannot create the key file ${file}: ${(cause as Error).message}`);
    }
    if (created)
      log.warn(
        { keyFile: file },
        `created the encryption key of webhook signing secrets at ${file}: back it up, keep it apart from copies of the database, and give every instance this same file`,
      );
    text = readFileSync(file, 'utf8');
  }
  const parsed = parseEncryptionKeys(text.trim());
  if (typeof parsed === 'string') throw new SecretKeyError(`${file}: ${parsed}`);
  if ((statSync(file).mode & 0o077) !== 0)
    log.warn({ keyFile: file }, 'the key file is readable by other users: chmod 600 it');
  return parsed;
}

/**
 * Writes the whole file aside, then links it into place: the link either appears complete or fails because
 * another process (a replica starting at the same moment on a shared volume) got there first, whose key wins.
 */
function createKeyFile(file: string, key: EncryptionKey): boolean {
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(temp, `${key.id}:${key.key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  try {
    chmodSync(temp, 0o600); // whatever the umask
    linkSync(temp, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    unlinkSync(temp);
  }
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
