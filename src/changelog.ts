import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface ChangelogEntry {
  version: string;
  date: string | null;
  changes: { type: string; text: string }[];
}

const FILE = fileURLToPath(new URL('../CHANGELOG.md', import.meta.url));

/**
 * CHANGELOG.md is the single source: "## [version] - YYYY-MM-DD" headings, "### Added|Changed|Fixed"
 * sections and "- " bullets. Parsed once at start-up for GET /api/v1/changelog.
 */
export function parseChangelog(markdown: string): ChangelogEntry[] {
  const entries: ChangelogEntry[] = [];
  let section = 'changed';
  for (const line of markdown.split('\n')) {
    const heading = /^## \[([^\]]+)\](?:\s*-\s*(\d{4}-\d{2}-\d{2}))?/.exec(line);
    if (heading) {
      entries.push({ version: heading[1], date: heading[2] ?? null, changes: [] });
      section = 'changed';
      continue;
    }
    const sub = /^### (\w+)/.exec(line);
    if (sub) {
      section = sub[1].toLowerCase();
      continue;
    }
    const bullet = /^[-*] (.+)$/.exec(line);
    const current = entries[entries.length - 1];
    if (bullet && current) current.changes.push({ type: section, text: bullet[1].trim() });
    else if (current && /^ {2,}\S/.test(line) && current.changes.length) {
      current.changes[current.changes.length - 1].text += ` ${line.trim()}`;
    }
  }
  return entries;
}

export function loadChangelog(file = FILE): ChangelogEntry[] {
  return parseChangelog(readFileSync(file, 'utf8'));
}
