// Local ESLint rules that keep the module anatomy (docs/development/module-anatomy.md, docs/adr/0011-module-anatomy.md)
// and the file-size limit from drifting. Plain JavaScript so ESLint loads it without a transpiler.
import path from 'node:path';

/** The roles a file under src/modules/<module>/ may have; each is defined in docs/development/module-anatomy.md. */
export const ROLES = ['routes', 'schemas', 'service', 'repository', 'rules', 'operations', 'job', 'adapter'];

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
  const singular = moduleName.replace(/s$/, '');
  if (topic === moduleName || topic.startsWith(`${singular}-`) || topic.startsWith(`${moduleName}-`)) return null;
  return `the topic must be "${moduleName}" or start with "${singular}-" (e.g. ${singular}-${topic}.${match[2]}.ts)`;
}

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
    'no-max-lines-disable': noMaxLinesDisable,
    'hard-max-lines': hardMaxLines,
  },
};
