// Local ESLint rules that keep the module anatomy (docs/development/module-anatomy.md, docs/adr/0011-module-anatomy.md)
// and the file-size limit from drifting. Plain JavaScript so ESLint loads it without a transpiler.
import { readdirSync } from 'node:fs';
import path from 'node:path';

/** The roles a file under src/modules/<module>/ may have; each is defined in docs/development/module-anatomy.md. */
export const ROLES = ['routes', 'schemas', 'service', 'repository', 'rules', 'operations', 'job', 'adapter', 'data'];

/** Files directly under src/modules/: the two registries. */
const REGISTRIES = new Set(['index.ts', 'services.ts']);
/** Helpers the services of several modules share: not a module, so its files carry no role. */
const SHARED = 'shared';

const KEBAB = '[a-z][a-z0-9]*(?:-[a-z0-9]+)*';
const MODULE_FILE = new RegExp(`^(${KEBAB})\\.(${ROLES.join('|')})\\.ts$`);
const SHARED_FILE = new RegExp(`^${KEBAB}\\.ts$`);

/** The problem with a path under src/modules/ (posix, relative to src/modules/), or null when it is well named. */
export function anatomyProblem(rel) {
  const parts = rel.split('/');
  if (parts.length === 1) {
    return REGISTRIES.has(parts[0])
      ? null
      : `only ${[...REGISTRIES].join(' and ')} sit directly under src/modules/; put code in a module folder`;
  }
  if (parts.length > 2) return 'a module is flat: no folders inside src/modules/<module>/';
  const [moduleName, file] = parts;
  if (moduleName === SHARED) {
    return SHARED_FILE.test(file) ? null : `src/modules/shared/ files are named <topic>.ts in kebab-case`;
  }
  const match = MODULE_FILE.exec(file);
  if (!match) return `name it <topic>.<role>.ts with a role among: ${ROLES.join(', ')}`;
  const topic = match[1];
  if (topicFits(moduleName, topic)) return null;
  const singular = moduleName.replace(/s$/, '');
  return `the topic must be "${moduleName}" or start with "${singular}-" (e.g. ${singular}-${topic}.${match[2]}.ts)`;
}

/** Whether a file topic belongs to the module: its name, or a sub-topic prefixed with its name or singular. */
function topicFits(moduleName, topic) {
  const singular = moduleName.replace(/s$/, '');
  return topic === moduleName || topic.startsWith(`${singular}-`) || topic.startsWith(`${moduleName}-`);
}

const TEST_FILE = new RegExp(`^(${KEBAB})\\.test\\.ts$`);

/**
 * The problem with a test file's path (posix, relative to test/), or null when it follows the scheme: a module's tests
 * are test/modules/<module>/<topic>.test.ts for a folder that exists under src/modules/, with a topic named as the
 * module's source files are (docs/development/module-anatomy.md, "Tests mirror the source"); every other test file is
 * <topic>.test.ts in kebab-case, with no other dot in its name.
 */
export function testFileProblem(rel, modules) {
  const parts = rel.split('/');
  const file = parts[parts.length - 1];
  const match = TEST_FILE.exec(file);
  if (parts[0] !== 'modules') {
    return match
      ? null
      : 'name a test file <topic>.test.ts in kebab-case, with no other dot (e.g. tool-labels.test.ts)';
  }
  if (parts.length !== 3)
    return "a module's tests sit directly in test/modules/<module>/ (helpers go to test/helpers/)";
  const moduleName = parts[1];
  if (!modules.has(moduleName)) {
    return `test/modules/${moduleName}/ mirrors no folder of src/modules/: put the test in its module's folder`;
  }
  if (!match) return `name it <topic>.test.ts in kebab-case, with no other dot (e.g. ${moduleName}.test.ts)`;
  if (topicFits(moduleName, match[1])) return null;
  const singular = moduleName.replace(/s$/, '');
  return `the topic must be "${moduleName}" or start with "${singular}-" (e.g. ${singular}-${match[1]}.test.ts)`;
}

const testFileName = {
  meta: {
    type: 'problem',
    docs: { description: 'A test file is named <topic>.test.ts; a module test sits in test/modules/<module>/' },
    schema: [],
  },
  create(context) {
    const rel = path.relative(context.cwd, context.filename).split(path.sep).join('/');
    const helperInModules = rel.startsWith('test/modules/') && !rel.endsWith('.test.ts');
    if (!helperInModules && (!rel.startsWith('test/') || !rel.endsWith('.test.ts'))) return {};
    const modules = new Set(
      readdirSync(path.join(context.cwd, 'src/modules'), { withFileTypes: true })
        .filter((d) => d.isDirectory() && d.name !== SHARED)
        .map((d) => d.name),
    );
    const problem = helperInModules
      ? 'test/modules/ holds only test files; put helpers in test/helpers/<module>/'
      : testFileProblem(rel.slice('test/'.length), modules);
    if (!problem) return {};
    return {
      Program(node) {
        context.report({ node, loc: { line: 1, column: 0 }, message: `${rel}: ${problem}.` });
      },
    };
  },
};

const moduleFileName = {
  meta: {
    type: 'problem',
    docs: { description: 'A file under src/modules/<module>/ is named <topic>.<role>.ts with a known role' },
    schema: [],
  },
  create(context) {
    const rel = path.relative(context.cwd, context.filename).split(path.sep).join('/');
    if (!rel.startsWith('src/modules/')) return {};
    const problem = anatomyProblem(rel.slice('src/modules/'.length));
    if (!problem) return {};
    return {
      Program(node) {
        context.report({ node, loc: { line: 1, column: 0 }, message: `${rel}: ${problem}.` });
      },
    };
  },
};

const noMaxLinesDisable = {
  meta: {
    type: 'problem',
    docs: { description: 'max-lines is never disabled: a file over the limit is split' },
    schema: [],
  },
  create(context) {
    return {
      Program() {
        for (const comment of context.sourceCode.getAllComments()) {
          if (/^\s*eslint-disable\b[^\n]*\bmax-lines\b/.test(comment.value)) {
            context.report({ loc: comment.loc, message: 'Split the file instead of disabling max-lines.' });
          }
        }
      },
    };
  },
};

const hardMaxLines = {
  meta: {
    type: 'problem',
    docs: { description: 'A hard limit on physical lines, comments and blank lines included' },
    schema: [{ type: 'object', properties: { max: { type: 'integer', minimum: 1 } }, additionalProperties: false }],
  },
  create(context) {
    const max = context.options[0]?.max ?? 400;
    return {
      Program(node) {
        const lines = context.sourceCode.lines.length;
        if (lines > max) {
          context.report({ node, loc: { line: 1, column: 0 }, message: `${lines} lines; the hard limit is ${max}.` });
        }
      },
    };
  },
};

export default {
  meta: { name: 'anatomy' },
  rules: {
    'module-file-name': moduleFileName,
    'test-file-name': testFileName,
    'no-max-lines-disable': noMaxLinesDisable,
    'hard-max-lines': hardMaxLines,
  },
};
