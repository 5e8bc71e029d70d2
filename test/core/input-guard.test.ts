import { describe, expect, it } from 'vitest';
import { findInputProblem, MAX_NESTING_DEPTH } from '../../src/core/input-guard.ts';

const NUL = 'must not contain NUL (\\u0000) characters';

describe('the input guard', () => {
  it('passes what has nothing to walk (no body, empty params and query) and plain values', () => {
    for (const value of [undefined, null, {}, Object.create(null), [], 0, true, 'text'])
      expect(findInputProblem(value, '')).toBeNull();
  });

  it('names the first field holding text the database cannot store, however deep', () => {
    expect(findInputProblem({ a: 'ok', b: { c: ['x', 'y\u0000'] } }, '')).toEqual(['b.c.1', NUL]);
    expect(findInputProblem({ lone: '\ud800' }, '')).toEqual([
      'lone',
      'must not contain unpaired UTF-16 surrogates (invalid Unicode)',
    ]);
    expect(findInputProblem('\u0000', '')).toEqual(['body', NUL]);
    expect(findInputProblem({ ['k\u0000']: 1 }, 'query')?.[1]).toMatch(
      /^has a property name that must not contain NUL/,
    );
  });

  it('walks own fields only, and refuses nesting past the limit', () => {
    expect(findInputProblem(Object.create({ inherited: '\u0000' }), '')).toBeNull();
    let deep: unknown = 'x';
    for (let i = 0; i <= MAX_NESTING_DEPTH; i++) deep = { d: deep };
    expect(findInputProblem(deep, '')?.[1]).toMatch(/nested too deeply/);
  });
});
