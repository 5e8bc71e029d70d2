import { parseArgs, type ParseArgsConfig } from 'node:util';

/**
 * The admin CLI's commands: the one table that its usage text (`admin --help`) and the generated
 * docs/reference/admin-cli.md are made from, and that the dispatcher's switch is checked against.
 */
export interface AdminCommand {
  /** The words that name it. */
  name: string;
  /** Its flags, as the usage shows them. */
  flags: string;
  /** What it does, one line. */
  does: string;
  /** What it prints on success (with --json: this object). */
  prints: string;
}

export const ADMIN_COMMANDS = [
  {
    name: 'org create',
    flags: '--name N [--slug S]',
    does: 'Create an organisation (the slug is made from the name unless given).',
    prints: '`{id, name, slug, createdAt}`',
  },
  {
    name: 'user create',
    flags: '--org SLUG --email E [--name N]',
    does: 'Add a person to an organisation, or add a removed person back (their old keys are revoked).',
    prints: '`{id, email, name}`',
  },
  {
    name: 'user remove',
    flags: '--org SLUG --email E',
    does: 'Remove a person: the keys they issued can still read but get 403 `key_creator_deleted` on writes.',
    prints: '`{id, removedAt}`',
  },
  {
    name: 'key create',
    flags: '--org SLUG --user EMAIL --label L [--scopes all|CSV] [--expires ISO] [--rate-limit N]',
    does: 'Issue an API key for a person, with the scopes listed (default: all).',
    prints: '`{id, key, label, scopes, expiresAt, rateLimitPerMinute}`: the plaintext key, shown this once',
  },
  {
    name: 'key revoke',
    flags: '--id KEY_ID',
    does: 'Revoke an API key.',
    prints: '`{id, revokedAt}`',
  },
  {
    name: 'key list',
    flags: '--org SLUG',
    does: "List an organisation's API keys (never the key itself).",
    prints: '`{keys: [...]}`',
  },
  {
    name: 'secrets rotate-key',
    flags: '[--batch N]',
    does:
      'Re-encrypt webhook signing secrets and telematics connection secrets under the first ' +
      '`SECRETS_ENCRYPTION_KEYS` key, N rows per transaction (default 100), progress on stderr; resumable and ' +
      'safe beside running servers. Exit 1 when a row could not be re-encrypted (its key is missing).',
    prints: '`{keyId, total, resealed, failed, remaining, telematics}`',
  },
  {
    name: 'attachments check',
    flags: '[--verify]',
    does:
      'Check every attachment row against the configured store (`--verify`: checksums too); exit 1 when bytes ' +
      'are missing or differ.',
    prints: '`{storage, checked, missing, mismatched}`',
  },
  {
    name: 'attachments copy-to-s3',
    flags: '[--switch]',
    does:
      'Copy local attachment bytes to `S3_BUCKET` (resumable); `--switch`: the rows then name the bucket ' +
      'objects (run it with the servers stopped).',
    prints: '`{copied, skipped, switched, failed}`',
  },
  {
    name: 'partitions convert',
    flags: '',
    does:
      'Turn meter_logs, events and webhook_deliveries holding rows into monthly partitions, online: their history ' +
      'becomes one partition, writes go on (no lock held over a second), progress on stderr; resumable.',
    prints: '`{converted, pending}`',
  },
  {
    name: 'quickstart',
    flags: '',
    does: 'Create a demo organisation, an admin user and an all-scopes key.',
    prints: 'the key and a ready-to-paste curl line',
  },
] as const satisfies readonly AdminCommand[];

export type AdminCommandName = (typeof ADMIN_COMMANDS)[number]['name'];

export const isAdminCommand = (words: string): words is AdminCommandName =>
  ADMIN_COMMANDS.some((c) => c.name === words);

function wrap(text: string, indent: string, width: number): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && indent.length + line.length + 1 + word.length > width) {
      lines.push(indent + line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, indent + line].join('\n');
}

/** The usage text: the command table, one line per command, as `admin --help` prints it. */
export function adminUsage(only?: AdminCommandName): string {
  const commands = only ? ADMIN_COMMANDS.filter((c) => c.name === only) : ADMIN_COMMANDS;
  const lines = commands.map((c) => {
    const head = `  ${c.name}${c.flags ? ` ${c.flags}` : ''}`;
    return `${head}\n${wrap(c.does.replace(/`/g, ''), '      ', 100)}`;
  });
  return [
    'Usage: npm run --silent admin -- <command> [flags] [--json]',
    '       (in a built image: node dist/cli/admin.js <command> [flags] [--json])',
    '',
    'Commands:',
    ...lines,
    '',
    'Options: --json prints exactly one JSON object on stdout; --help prints this text.',
    'It uses the same database settings as the server (see docs/configuration.md).',
  ].join('\n');
}

const OPTIONS = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  name: { type: 'string' },
  slug: { type: 'string' },
  org: { type: 'string' },
  email: { type: 'string' },
  user: { type: 'string' },
  label: { type: 'string' },
  scopes: { type: 'string' },
  expires: { type: 'string' },
  'rate-limit': { type: 'string' },
  id: { type: 'string' },
  batch: { type: 'string' },
  verify: { type: 'boolean' },
  switch: { type: 'boolean' },
} as const satisfies ParseArgsConfig['options'];

export type AdminFlags = Record<string, string | boolean | undefined>;
export interface AdminRequest {
  command: AdminCommandName;
  words: string[];
  flags: AdminFlags;
}
interface Io {
  out(text: string): void;
  err(text: string): void;
}

/**
 * Reads argv before anything opens the database: answers `--help`/`-h`/`help [command]` on stdout (exit 0), and
 * a bad flag, a missing or an unknown command on stderr with the usage (exit 1); otherwise the command to run.
 */
export function parseAdminArgs(argv: string[], io: Io): AdminRequest | { exitCode: number } {
  const asksHelp = argv.includes('--help') || argv.includes('-h') || argv[0] === 'help';
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, strict: true, options: OPTIONS });
  } catch (err) {
    // `admin key create --bogus --help` still gets its help.
    if (asksHelp)
      return help(
        argv.filter((a) => !a.startsWith('-')),
        io,
      );
    io.err(`error: ${(err as Error).message.split(/\.\s/)[0]} (admin --help lists the commands and flags)`);
    return { exitCode: 1 };
  }
  const words = parsed.positionals;
  if (parsed.values.help || words[0] === 'help') return help(words, io);
  const command = words.join(' ');
  if (!isAdminCommand(command)) {
    if (command) io.err(`error: unknown command "${command}"`);
    io.err(adminUsage());
    return { exitCode: 1 };
  }
  return { command, words, flags: parsed.values };
}

function help(words: string[], io: Io) {
  const command = (words[0] === 'help' ? words.slice(1) : words).join(' ');
  io.out(adminUsage(isAdminCommand(command) ? command : undefined));
  return { exitCode: 0 };
}
