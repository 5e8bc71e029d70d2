import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ADMIN_COMMANDS, adminUsage, parseAdminArgs } from '../../src/cli/admin-commands.ts';
import { nodeArgs } from '../helpers/processes/node-process.ts';

function parse(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const result = parseAdminArgs(argv, { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { result, out: out.join('\n'), err: err.join('\n') };
}

describe('admin CLI usage', () => {
  it('prints the usage on stdout and exits 0 for --help, -h and help', () => {
    for (const argv of [['--help'], ['-h'], ['help']]) {
      const { result, out, err } = parse(...argv);
      expect(result, argv.join(' ')).toEqual({ exitCode: 0 });
      expect(out).toBe(adminUsage());
      expect(err).toBe('');
    }
  });

  it('lists every command of the table in the usage', () => {
    const usage = adminUsage();
    for (const c of ADMIN_COMMANDS) expect(usage).toContain(`  ${c.name}${c.flags ? ` ${c.flags}` : ''}\n`);
  });

  it("prints one command's usage for `<command> --help` and `help <command>`, even beside other flags", () => {
    for (const argv of [
      ['attachments', 'check', '--help'],
      ['help', 'attachments', 'check'],
      ['attachments', 'check', '--bogus', '-h'],
    ]) {
      const { result, out } = parse(...argv);
      expect(result, argv.join(' ')).toEqual({ exitCode: 0 });
      expect(out).toBe(adminUsage('attachments check'));
      expect(out).not.toContain('key create');
    }
  });

  it('answers an unknown or a missing command with the usage on stderr and exit 1', () => {
    const unknown = parse('keys', 'list');
    expect(unknown.result).toEqual({ exitCode: 1 });
    expect(unknown.out).toBe('');
    expect(unknown.err).toBe(`error: unknown command "keys list"\n${adminUsage()}`);
    const none = parse('--json');
    expect(none.result).toEqual({ exitCode: 1 });
    expect(none.err).toBe(adminUsage());
  });

  it('answers an unknown flag with one line naming it and exit 1', () => {
    const { result, err } = parse('key', 'list', '--bogus');
    expect(result).toEqual({ exitCode: 1 });
    expect(err).toBe("error: Unknown option '--bogus' (admin --help lists the commands and flags)");
  });

  it('hands a known command and its flags on', () => {
    expect(parse('key', 'list', '--org', 'acme', '--json').result).toEqual({
      command: 'key list',
      words: ['key', 'list'],
      flags: { org: 'acme', json: true },
    });
  });

  // The process answers before it reads the configuration or opens the database (a bad DATABASE_URL is never seen).
  it('as a process, prints the usage with exit 0 without opening the database', { timeout: 60_000 }, () => {
    const cli = path.resolve('src/cli/admin.ts');
    const env = { PATH: process.env.PATH, DATABASE_URL: 'mysql://nope' };
    const help = spawnSync(process.execPath, nodeArgs(cli, '--help'), { env, encoding: 'utf8', timeout: 60_000 });
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toBe(`${adminUsage()}\n`);
    const unknown = spawnSync(process.execPath, nodeArgs(cli, 'bogus'), { env, encoding: 'utf8', timeout: 60_000 });
    expect(unknown.status).toBe(1);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toContain('error: unknown command "bogus"\nUsage:');
  });
});
