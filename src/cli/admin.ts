import { conversionPending, convertToPartitions, PARTITION_CONVERSION_LOCK_ID } from '../db/partition-conversion.ts';
import { ConfigError, loadConfig, type Config } from '../config.ts';
import { openDatabase, type Database } from '../db/database.ts';
import { DataDirLockedError } from '../db/data-dir-lock.ts';
import { migrate, readMigrations } from '../db/migrator.ts';
import { migrateDatabase } from '../db/direct.ts';
import { AdminError, createOrgAdmin, type OrgAdmin } from '../modules/orgs/orgs.service.ts';
import { createKeyring, resolveKeyring, SecretKeyError, type Keyring } from '../core/secret-keys.ts';
import { resealTelematicsSecrets } from '../modules/telematics/telematics-secrets.repository.ts';
import { createSecretBox } from '../security/secret-box.ts';
import { createWebhookSecretStore } from '../modules/webhooks/webhook-secrets.repository.ts';
import { createAttachmentAdmin } from '../modules/attachments/attachment-admin.service.ts';
import { parseAdminArgs, type AdminCommandName, type AdminFlags } from './admin-commands.ts';

type Flags = AdminFlags;
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
}

function need(flags: Flags, name: string): string {
  const value = flags[name];
  if (typeof value !== 'string' || value.trim() === '') throw new AdminError(`--${name} is required`);
  return value;
}
const opt = (flags: Flags, name: string) => (typeof flags[name] === 'string' ? (flags[name] as string) : undefined);

async function quickstart(admin: OrgAdmin, config: Config) {
  let slug = 'demo';
  for (let n = 2; ; n++) {
    try {
      const org = await admin.createOrg('Demo Fleet', slug);
      const user = await admin.createUser(org.slug, `admin@${org.slug}.example.com`, 'Demo Admin');
      const key = await admin.createKey({
        orgSlug: org.slug,
        userEmail: user.email,
        label: 'quickstart',
        scopes: 'all',
      });
      const curl = `curl -s -H "Authorization: Bearer ${key.key}" ${config.publicBaseUrl}/api/v1/me`;
      return { organization: org, user, key, curl };
    } catch (err) {
      if (!(err instanceof AdminError) || !err.message.includes('already exists') || n > 50) throw err;
      slug = `demo-${n}`;
    }
  }
}

/** A command that did part of its work: the error, with what was done (printed with --json). */
class PartialRunError extends AdminError {
  constructor(
    message: string,
    readonly result: Record<string, unknown>,
  ) {
    super(message);
  }
}

/**
 * Re-encrypts every webhook secret not under the first key (and any plaintext left by an older release), in
 * batches of --batch rows, each batch one transaction over rows locked with SKIP LOCKED and written with a
 * compare-and-set: safe beside running servers and another run, and resumable (a new run only sees what is
 * left). Progress goes to stderr; rows whose key is missing are listed and make the exit code 1.
 */
async function rotateKey(db: Database, keyring: Keyring, flags: Flags, io: CliIo) {
  const batch = Number(opt(flags, 'batch') ?? 100);
  if (!Number.isInteger(batch) || batch < 1 || batch > 10_000)
    throw new AdminError('--batch must be a whole number from 1 to 10000');
  const store = createWebhookSecretStore(db, createSecretBox(keyring));
  io.err(`re-encrypting webhook secrets under key "${keyring.primary.id}" (keys held: ${keyring.ids.join(', ')})`);
  const result = await store.reseal('not-primary', {
    batch,
    onProgress: (p) => io.err(`  ${p.resealed + p.failed.length}/${p.total} rows (${p.failed.length} failed)`),
  });
  io.err('re-encrypting telematics connection secrets');
  const telematics = await resealTelematicsSecrets(db, createSecretBox(keyring), batch);
  const summary = { keyId: keyring.primary.id, ...result, telematics };
  for (const f of telematics.failed) io.err(`  telematics connection ${f.connectionId}: ${f.reason}`);
  if (result.failed.length > 0 || result.remaining > 0 || telematics.failed.length > 0) {
    for (const f of result.failed) io.err(`  subscription ${f.subscriptionId}: ${f.reason}`);
    throw new PartialRunError(
      `${result.failed.length} row(s) could not be re-encrypted and ${result.remaining} were busy; ` +
        "restore the missing key (or rotate those subscriptions' secrets with overlapSeconds 0), then run it again",
      summary,
    );
  }
  return summary;
}

async function attachmentsCommand(
  command: string,
  config: Config,
  flags: Flags,
  { db, io }: { db: Database; io: CliIo },
) {
  const admin = createAttachmentAdmin(db, config);
  const progress = (line: string) => io.err(line);
  if (command === 'attachments check') {
    io.err(`checking attachments against ${config.attachments.storage} storage`);
    const result = await admin.check({ verify: flags.verify === true, progress });
    if (result.missing.length || result.mismatched.length) {
      for (const id of result.missing) io.err(`  missing: ${id}`);
      for (const id of result.mismatched) io.err(`  mismatched: ${id}`);
      throw new PartialRunError(
        `${result.missing.length} attachment(s) without their bytes and ${result.mismatched.length} with other bytes`,
        result,
      );
    }
    return result;
  }
  io.err(`copying local attachments to s3://${config.attachments.s3.bucket}/${config.attachments.s3.prefix}`);
  const result = await admin.copyToS3({ switchKeys: flags.switch === true, progress });
  if (result.failed.length) {
    for (const f of result.failed) io.err(`  ${f.id}: ${f.reason}`);
    throw new PartialRunError(`${result.failed.length} attachment(s) could not be copied; run it again`, result);
  }
  return result;
}

async function dispatch(
  admin: OrgAdmin,
  config: Config,
  command: AdminCommandName,
  flags: Flags,
  secrets: () => { db: Database; keyring: Keyring; io: CliIo },
  store: { db: Database; io: CliIo },
): Promise<Record<string, unknown>> {
  switch (command) {
    case 'org create':
      return admin.createOrg(need(flags, 'name'), opt(flags, 'slug'));
    case 'user create':
      return admin.createUser(need(flags, 'org'), need(flags, 'email'), opt(flags, 'name'));
    case 'user remove':
      return admin.removeUser(need(flags, 'org'), need(flags, 'email'));
    case 'key create':
      return admin.createKey({
        orgSlug: need(flags, 'org'),
        userEmail: need(flags, 'user'),
        label: need(flags, 'label'),
        scopes: opt(flags, 'scopes'),
        expires: opt(flags, 'expires'),
        rateLimit: opt(flags, 'rate-limit'),
      });
    case 'key revoke':
      return admin.revokeKey(need(flags, 'id'));
    case 'key list':
      return admin.listKeys(need(flags, 'org'));
    case 'quickstart':
      return quickstart(admin, config);
    case 'secrets rotate-key': {
      const { db, keyring, io } = secrets();
      return rotateKey(db, keyring, flags, io);
    }
    case 'attachments check':
    case 'attachments copy-to-s3':
      return attachmentsCommand(command, config, flags, store);
    case 'partitions convert':
      return convertPartitions(store.db, store.io);
    default:
      // A command in the table without a case here fails to compile.
      return command satisfies never;
  }
}

/** The online partition conversion on a session of its own (its DDL sets session timeouts), progress on stderr. */
async function convertPartitions(db: Database, io: CliIo): Promise<Record<string, unknown>> {
  return db.sql.withExclusiveLock(PARTITION_CONVERSION_LOCK_ID, async (sql) => {
    if (!sql.pinned) throw new AdminError('the conversion needs a direct session: point DATABASE_URL at PostgreSQL');
    const converted = await convertToPartitions(sql, {
      onProgress: (p) => io.err(`${p.table}: ${p.step}${p.detail ? ` (${p.detail})` : ''}`),
    });
    return { converted, pending: await conversionPending(sql) };
  });
}

function human(words: string[], result: Record<string, unknown>): string {
  if (words[0] === 'quickstart') {
    const r = result as {
      organization: { slug: string };
      user: { email: string };
      key: { id: string; key: string };
      curl: string;
    };
    return [
      `Organisation: ${r.organization.slug}`,
      `Admin user:   ${r.user.email}`,
      `API key id:   ${r.key.id}`,
      `API key:      ${r.key.key}   (shown once: store it now)`,
      '',
      'Try it:',
      `  ${r.curl}`,
    ].join('\n');
  }
  return Object.entries(result)
    .map(([k, v]) => `${k}: ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
    .join('\n');
}

/**
 * Runs one admin command against an open database; returns the process exit code. `keyring` (secrets
 * commands only): the keys of webhook secrets; by default SECRETS_ENCRYPTION_KEYS.
 */
export async function runAdminCommand(
  db: Database,
  config: Config,
  argv: string[],
  io: CliIo,
  keyring: () => Keyring = () => {
    if (config.secretsEncryptionKeys.length === 0) throw new AdminError('SECRETS_ENCRYPTION_KEYS is not set');
    return createKeyring(config.secretsEncryptionKeys);
  },
): Promise<number> {
  const parsed = parseAdminArgs(argv, io);
  if ('exitCode' in parsed) return parsed.exitCode;
  try {
    const result = await dispatch(
      createOrgAdmin(db),
      config,
      parsed.command,
      parsed.flags,
      () => ({ db, keyring: keyring(), io }),
      { db, io },
    );
    io.out(parsed.flags.json ? JSON.stringify(result) : human(parsed.words, result));
    return 0;
  } catch (err) {
    if (err instanceof SecretKeyError) {
      io.err(`error: ${err.message}`);
      return 1;
    }
    if (err instanceof AdminError) {
      if (parsed.flags.json && err instanceof PartialRunError) io.out(JSON.stringify(err.result));
      io.err(`error: ${err.message}`);
      return 1;
    }
    throw err;
  }
}

async function main(): Promise<number> {
  const io: CliIo = { out: (t) => process.stdout.write(`${t}\n`), err: (t) => process.stderr.write(`${t}\n`) };
  // Help and a mistyped command are answered without opening the database (which a running server may hold).
  const early = parseAdminArgs(process.argv.slice(2), io);
  if ('exitCode' in early) return early.exitCode;
  let db: Database | undefined;
  try {
    const config = loadConfig();
    db = await openDatabase({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      poolSize: 2,
      preparedStatements: config.dbPreparedStatements,
    });
    await migrateDatabase(db, {
      directUrl: config.databaseDirectUrl,
      timeouts: config.dbTimeouts,
      run: (sql) => migrate(sql, readMigrations(), config.migrations),
    });
    const opened = db;
    const keyring = () =>
      resolveKeyring({
        configured: config.secretsEncryptionKeys,
        keyFile: config.secretsEncryptionKeysFile,
        database: opened.kind,
        dataDir: config.dataDir,
        log: { info: (_o, msg) => io.err(msg), warn: (_o, msg) => io.err(msg) },
      });
    return await runAdminCommand(db, config, process.argv.slice(2), io, keyring);
  } catch (err) {
    if (err instanceof ConfigError || err instanceof DataDirLockedError)
      io.err(`error: ${err.message.replace(/\n\s*/g, ' ')}`);
    else io.err(`error: ${(err as Error).message?.split('\n')[0] ?? String(err)}`);
    return 1;
  } finally {
    await db?.close().catch(() => {});
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().then((code) => process.exit(code));
}
