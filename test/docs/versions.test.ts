import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseChangelog } from '../../src/changelog.ts';

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
const pkg = JSON.parse(read('package.json')) as { version: string; engines: { node: string } };

describe('versions', () => {
  it("package.json's version is the CHANGELOG's latest release", () => {
    const released = parseChangelog(read('CHANGELOG.md')).filter((entry) => entry.date !== null);
    expect(released.length).toBeGreaterThan(0);
    expect(pkg.version, 'set "version" in package.json to the latest release of CHANGELOG.md').toBe(
      released[0].version,
    );
  });

  it('the contract documents carry the same version', () => {
    for (const file of ['openapi.yaml', 'asyncapi.yaml']) {
      const doc = parse(read(file)) as { info: { version: string } };
      expect(doc.info.version, file).toBe(pkg.version);
    }
    expect(JSON.parse(read('package-lock.json')).version).toBe(pkg.version);
  });

  it('every page that states the Node.js version states the minimum of `engines`', () => {
    const minimum = /^>=(\d+\.\d+)$/.exec(pkg.engines.node)?.[1];
    expect(minimum, 'engines.node is ">=<major>.<minor>"').toBeDefined();
    for (const file of ['README.md', 'CONTRIBUTING.md', 'docs/getting-started.md']) {
      const text = read(file);
      expect(text, file).toContain(`Node.js ${minimum} or newer`);
      const others = [...text.matchAll(/Node\.js (\d+(?:\.\d+)?) or newer/g)].map((m) => m[1]);
      expect(others, `${file} names another minimum`).toEqual(others.map(() => minimum));
    }
  });
});
