// Lint rules that protect the architecture (docs/development/module-anatomy.md): module files named by role,
// services free of Fastify, routes free of the database, files small enough to read. Import cycles (type imports
// included) are checked by `npm run lint:cycles`. Formatting is Prettier's (.prettierrc.json).
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';
import anatomy from './eslint-rules/anatomy.js';

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'src/generated/',
      'sdk/dist/',
      'sdk/src/generated/',
      'dist/',
      'coverage/',
      'data/',
      'test/contracts/client/generated/',
      'bench/results/',
    ],
  },
  ...tseslint.configs.recommended,
  prettier,
  {
    files: ['**/*.ts'],
    plugins: { anatomy },
    rules: {
      'anatomy/no-max-lines-disable': 'error',
      'max-lines': ['error', { max: 300, skipBlankLines: true, skipComments: true }],
      'max-len': [
        'error',
        { code: 120, ignoreUrls: true, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true },
      ],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  {
    // A test file tells one story end to end (set-up, the scenario, its assertions); scenario files run longer.
    // Test files are named one way and a module's tests mirror it (docs/development/module-anatomy.md).
    files: ['test/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 450, skipBlankLines: true, skipComments: true }],
      'anatomy/test-file-name': 'error',
    },
  },
  {
    // One module anatomy: src/modules/<module>/<topic>.<role>.ts (docs/adr/0011-module-anatomy.md); and no source
    // file past the hard limit, comments included.
    files: ['src/**/*.ts'],
    rules: { 'anatomy/module-file-name': 'error', 'anatomy/hard-max-lines': ['error', { max: 400 }] },
  },
  {
    // Services, repositories and domain rules see plain data: Fastify stays in routes and src/http/.
    files: ['src/modules/**/*.ts', 'src/meta/**/*.ts'],
    ignores: ['src/modules/**/*.routes.ts', 'src/modules/index.ts', 'src/meta/**/*.routes.ts'],
    rules: {
      // A logger's type is all a service may take from Fastify.
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/http/*'], message: 'Services import from core/, not http/ (Fastify code).' },
            { group: ['fastify', '@fastify/*'], message: 'Services never see Fastify.', allowTypeImports: true },
          ],
        },
      ],
    },
  },
  {
    // Rules, schemas and data are plain functions, shapes and constants: the roles that do I/O may use them, never
    // the reverse.
    files: ['src/modules/**/*.rules.ts', 'src/modules/**/*.schemas.ts', 'src/modules/**/*.data.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '**/*.routes.ts',
                '**/*.service.ts',
                '**/*.repository.ts',
                '**/*.operations.ts',
                '**/*.job.ts',
                '**/*.adapter.ts',
                '**/db/database.ts',
                '**/db/transaction.ts',
              ],
              message: 'Rules, schemas and data do no I/O: the caller passes them what they need.',
            },
          ],
        },
      ],
    },
  },
  {
    // Routes call services; only services and repositories talk to the database.
    files: ['src/modules/**/*.routes.ts', 'src/meta/**/*.routes.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/generated/prisma/*', '**/db/*', '**/*.repository.ts'], message: 'Routes call a service.' },
            {
              group: ['../*/*.routes.ts'],
              message: "Another module's routes are its own: share HTTP helpers through src/http/.",
            },
          ],
        },
      ],
    },
  },
);
