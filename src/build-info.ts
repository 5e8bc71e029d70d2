import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface BuildInfo {
  commit: string;
  branch: string;
  startedAt: Date;
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Reads .git once at start-up (never per request, never by shelling out); env wins (Docker builds). */
function fromGitDir(): { commit?: string; branch?: string } {
  try {
    const gitDir = path.join(ROOT, '.git');
    const head = readFileSync(path.join(gitDir, 'HEAD'), 'utf8').trim();
    if (!head.startsWith('ref: ')) return { commit: head };
    const ref = head.slice(5);
    const branch = ref.replace(/^refs\/heads\//, '');
    const loose = path.join(gitDir, ref);
    if (existsSync(loose)) return { branch, commit: readFileSync(loose, 'utf8').trim() };
    const packed = readFileSync(path.join(gitDir, 'packed-refs'), 'utf8')
      .split('\n')
      .find((line) => line.endsWith(` ${ref}`));
    return { branch, commit: packed?.split(' ')[0] };
  } catch {
    return {};
  }
}

export function readBuildInfo(env: { commit?: string; branch?: string }): BuildInfo {
  const git = env.commit && env.branch ? {} : fromGitDir();
  const commit = env.commit ?? git.commit ?? 'unknown';
  return {
    commit: commit === 'unknown' ? commit : commit.slice(0, 12),
    branch: env.branch ?? git.branch ?? 'unknown',
    startedAt: new Date(),
  };
}
