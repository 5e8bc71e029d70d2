import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { keepTickObjectShape, keptTickObject, tickEntriesAreLiterals } from '../../src/core/tick-shape.ts';
import { TS_NODE_ARGS } from '../helpers/processes/node-process.ts';

const MODULE = fileURLToPath(new URL('../../src/core/tick-shape.ts', import.meta.url));

// In a process of its own (V8's intrinsics and gc() need flags, and the test worker's own history must not count):
// nextTick used until V8 caches how it builds its queue entries, full collections with the queue empty, nextTick
// used again; then V8's own report on what builds the entries (nextTick's object literal up to Node.js 25, the
// TickObject class's constructor from 26 on), whose property definitions each say MONOMORPHIC (one hidden class,
// the fast path) or MEGAMORPHIC (the runtime, for the rest of the process).
const SCRIPT = `
const { createHook } = await import('node:async_hooks');
const { keepTickObjectShape } = await import(${JSON.stringify(MODULE)});
if (process.argv.at(-1) === 'keep') keepTickObjectShape();
const settle = () => new Promise((resolve) => setTimeout(resolve, 1));
const use = async () => { for (let i = 0; i < 50; i++) { process.nextTick(() => {}); await settle(); } };
await use();
// Several: V8 keeps a map that an inline cache used alive for a few full collections after its last use.
for (let i = 0; i < 4; i++) globalThis.gc();
await use();
let entry;
const hook = createHook({ init(_id, type, _trigger, resource) { if (type === 'TickObject') entry ??= resource; } });
hook.enable();
process.nextTick(() => {});
hook.disable();
const literal = entry.constructor === Object;
console.log(literal ? 'BUILT-BY literal' : 'BUILT-BY class');
new Function('f', '%DebugPrint(f)')(literal ? process.nextTick : entry.constructor);
`;

// V8 prints its report with C's stdio, to a file here: on a pipe, which Node.js makes non-blocking, a report longer
// than the pipe's buffer can lose its end.
function literalCacheStates(mode: 'keep' | 'plain'): string[] {
  const dir = mkdtempSync(path.join(tmpdir(), 'tick-shape-'));
  const file = path.join(dir, 'report.txt');
  const out = openSync(file, 'w');
  try {
    const run = spawnSync(
      process.execPath,
      [...TS_NODE_ARGS, '--allow-natives-syntax', '--expose-gc', '--input-type=module', '-e', SCRIPT, mode],
      { encoding: 'utf8', timeout: 30_000, stdio: ['ignore', out, 'pipe'] },
    );
    expect(run.status, run.stderr).toBe(0);
    const report = readFileSync(file, 'utf8');
    // The literal's computed keys, or the constructor's `this[symbol] =` and `this.name =` stores.
    const definition = report.includes('BUILT-BY literal')
      ? /DefineKeyedOwnPropertyInLiteral (\w+)/g
      : /(?:StoreKeyedStrict|SetNamedStrict) (\w+)/g;
    const states = [...report.matchAll(definition)].map((m) => m[1]);
    expect(states.length, 'V8 printed no report').toBeGreaterThanOrEqual(4);
    return states;
  } finally {
    closeSync(out);
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("process.nextTick's queue entries", () => {
  const monomorphic = (states: string[]) => states.every((state) => state === 'MONOMORPHIC');

  it('are built the fast way after a full collection when one entry is kept', () => {
    const states = literalCacheStates('keep');
    expect(monomorphic(states), states.join(' ')).toBe(true);
  });

  // The control: without the kept entry the same sequence leaves nextTick on the runtime path. Should a Node.js
  // release before 26 stop doing that, this fails, and keepTickObjectShape can go there too.
  it.runIf(tickEntriesAreLiterals)(
    'fall back to the runtime after a full collection otherwise (Node.js before 26)',
    () => {
      expect(literalCacheStates('plain')).toContain('MEGAMORPHIC');
    },
  );

  // Node.js 26 builds the entries with a class, whose constructor keeps their hidden class. Should a later release
  // lose the entries' shape again, this fails.
  it.runIf(!tickEntriesAreLiterals)('stay on the fast path without a kept entry (Node.js 26 on)', () => {
    const states = literalCacheStates('plain');
    expect(monomorphic(states), states.join(' ')).toBe(true);
  });

  it('are kept one for good, however often it is called', () => {
    keepTickObjectShape();
    const entry = keptTickObject();
    keepTickObjectShape();
    expect(keptTickObject()).toBe(entry);
    // A queue entry: Node's async-id symbols (and, from Node.js 22, its async context frame), the callback and
    // its arguments; a TickObject from Node.js 26 on.
    expect(Object.getOwnPropertySymbols(entry).map((s) => s.description)).toEqual(
      expect.arrayContaining(['async_id_symbol', 'trigger_async_id_symbol']),
    );
    expect(Object.keys(entry!)).toEqual(['callback', 'args']);
  });
});
