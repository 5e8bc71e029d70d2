import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { resolveLogFormat } from '../../src/logger.ts';
import { TS_NODE_ARGS } from '../helpers/processes/node-process.ts';

/** What a process writes to stdout when it logs one line through createLogger (stdout is a pipe here). */
function logOnce(format: string): string {
  const script =
    "import { createLogger } from './src/logger.ts';" +
    `createLogger('info', '${format}').info({ orgId: 'org_1' }, 'server listening');`;
  const res = spawnSync(process.execPath, [...TS_NODE_ARGS, '--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { PATH: process.env.PATH, NO_COLOR: '1' },
  });
  expect(res.status, res.stderr).toBe(0);
  return res.stdout;
}

describe('log format', () => {
  it('auto is pretty on a terminal and JSON otherwise; json and pretty are what they say', () => {
    expect(resolveLogFormat('auto', true)).toBe('pretty');
    expect(resolveLogFormat('auto', false)).toBe('json');
    expect(resolveLogFormat('json', true)).toBe('json');
    expect(resolveLogFormat('pretty', false)).toBe('pretty');
  });

  it('is read from LOG_FORMAT, auto by default, and a bad value is refused', () => {
    expect(loadConfig({}).logFormat).toBe('auto');
    expect(loadConfig({ LOG_FORMAT: 'pretty' }).logFormat).toBe('pretty');
    expect(() => loadConfig({ LOG_FORMAT: 'yaml' })).toThrow(ConfigError);
  });

  it('writes one JSON object per line when stdout is not a terminal', { timeout: 60_000 }, () => {
    const out = logOnce('auto');
    expect(out.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(out)).toMatchObject({ level: 30, msg: 'server listening', orgId: 'org_1' });
  });

  it('writes a human line with pretty: time, level, message, then the fields', { timeout: 60_000 }, () => {
    const out = logOnce('pretty');
    expect(() => JSON.parse(out)).toThrow();
    expect(out).toMatch(/^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: server listening\n {4}orgId: "org_1"\n$/);
  });
});
