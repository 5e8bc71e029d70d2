// Lints every migration added since the previous release (.ci/previous-release) with squawk (npm squawk-cli,
// a binary from an optional platform package: no download at install). It is fetched by `npm exec` at the
// pinned version rather than listed in package.json: the registry this project installs from serves only some
// of squawk-cli's platform packages, and `npm ci` refuses a lockfile that names optional packages it cannot
// resolve (an `npm install` tolerates them; `npm exec` installs the same way, into npm's cache). Migrations the migrator wraps in a
// transaction are linted as such (--assume-in-transaction); those starting with `-- migrate:no-transaction`
// statement by statement, where squawk also asks for re-runnable statements (IF NOT EXISTS). Rules: .squawk.toml.
// Accepted findings, each with its reason: .ci/migration-lint-exceptions.json.
// Usage: npm run lint:migrations [-- --all] (--all: every migration, released ones included, for information).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const SQUAWK_VERSION = '2.66.0';
const dir = path.join(root, 'prisma/migrations');
const rev = readFileSync(path.join(root, '.ci/previous-release'), 'utf8').trim();
const all = process.argv.includes('--all');

const released = new Set(
  all
    ? []
    : execFileSync('git', ['ls-tree', '-d', '--name-only', `${rev}:prisma/migrations`], { cwd: root, encoding: 'utf8' })
        .split('\n')
        .filter(Boolean),
);
const fresh = readdirSync(dir, { withFileTypes: true })
  .filter((d) => d.isDirectory() && !released.has(d.name) && existsSync(path.join(dir, d.name, 'migration.sql')))
  .map((d) => d.name)
  .sort();

const { exceptions } = JSON.parse(readFileSync(path.join(root, '.ci/migration-lint-exceptions.json'), 'utf8'));
for (const e of exceptions) {
  if (!e.migration || !e.rule || !e.reason?.trim())
    throw new Error(`exception without migration, rule or reason: ${JSON.stringify(e)}`);
}

const file = (name) => path.join('prisma/migrations', name, 'migration.sql');
const noTransaction = (name) =>
  readFileSync(path.join(root, file(name)), 'utf8')
    .split('\n', 1)[0]
    .trim() === '-- migrate:no-transaction';

function squawk(names, inTransaction) {
  if (!names.length) return [];
  const args = [
    '--config',
    '.squawk.toml',
    '--reporter',
    'json',
    inTransaction ? '--assume-in-transaction' : '--no-assume-in-transaction',
  ];
  const run = spawnSync(
    'npm',
    ['exec', '--yes', `--package=squawk-cli@${SQUAWK_VERSION}`, '--', 'squawk', ...args, ...names.map(file)],
    {
      cwd: root,
      encoding: 'utf8',
    },
  );
  if (run.error || (run.status !== 0 && !run.stdout.trim().startsWith('['))) {
    throw new Error(
      `squawk did not run (${run.error?.message ?? run.stderr.trim()}): squawk-cli@${SQUAWK_VERSION} for this platform from the npm registry`,
    );
  }
  return JSON.parse(run.stdout || '[]');
}

const findings = [
  ...squawk(
    fresh.filter((n) => !noTransaction(n)),
    true,
  ),
  ...squawk(fresh.filter(noTransaction), false),
];
const migrationOf = (f) => path.basename(path.dirname(f.file));
const accepted = (f) => exceptions.some((e) => e.migration === migrationOf(f) && e.rule === f.rule_name);
const failing = findings.filter((f) => !accepted(f));
for (const f of failing) {
  console.error(`${f.file}:${f.line + 1}:${f.column + 1} ${f.rule_name}: ${f.message}${f.help ? ` (${f.help})` : ''}`);
}
const waived = findings.length - failing.length;
console.log(
  `squawk: ${fresh.length} migration(s) ${all ? 'in all' : `since ${rev.slice(0, 7)}`}, ${failing.length} finding(s)` +
    (waived ? `, ${waived} accepted in .ci/migration-lint-exceptions.json` : ''),
);
process.exit(failing.length ? 1 : 0);
