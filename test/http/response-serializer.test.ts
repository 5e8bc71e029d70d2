import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createSerializerCompiler, isCompiled } from '../../src/http/response-serializer.ts';
import { ErrorResponse } from '../../src/core/schemas.ts';
import { ListAssetsResponse } from '../../src/modules/assets/assets.schemas.ts';
import { MeResponse } from '../../src/meta/meta.schemas.ts';
import { HoursCreatedResponse } from '../../src/modules/hours/hours.schemas.ts';
import { isoFromUtcText } from '../../src/db/utc-text.ts';
import { immutable } from '../../src/core/immutable.ts';

/** `verify` (the default here) also runs zod on every call and fails when the two outputs differ. */
const compile = (schema: z.ZodType, verify = true) =>
  createSerializerCompiler({ verify })({ schema, method: 'GET', url: '/x', httpStatus: '200' } as never) as (
    data: unknown,
  ) => string;

const Thing = z.object({
  id: z.string(),
  at: z.iso.datetime({ offset: true }),
  n: z.number().int().nonnegative(),
  kind: z.enum(['A', 'B']),
  ok: z.literal(true),
  note: z.string().nullable().optional(),
  tags: z.array(z.string().max(3)),
  extra: z.record(z.string(), z.number()),
});

describe('compiled response serialisers', () => {
  it('are used for the hot routes and the error body', () => {
    for (const schema of [ListAssetsResponse, MeResponse, HoursCreatedResponse, ErrorResponse])
      expect(isCompiled(schema)).toBe(true);
    // Anything they do not reproduce exactly keeps zod's serialiser.
    expect(isCompiled(z.object({ a: z.string().transform((s) => s.length) }))).toBe(false);
    expect(isCompiled(z.looseObject({ a: z.string() }))).toBe(false);
    expect(isCompiled(z.union([z.string(), z.number()]))).toBe(false);
  });

  it('write what zod writes: declared fields only, in the schema order, optional ones left out', () => {
    const ser = compile(Thing);
    const data = {
      secret: 'never sent',
      extra: { b: 2, a: 1 },
      tags: ['x', 'y"z'],
      ok: true,
      kind: 'B',
      n: 3,
      at: '2026-11-25T10:00:00.000Z',
      id: 'é\n\u2028',
    };
    const out = ser(data);
    expect(out).toBe(JSON.stringify(Thing.parse(data)));
    expect(out).not.toContain('secret');
    expect(ser({ ...data, note: null })).toBe(JSON.stringify(Thing.parse({ ...data, note: null })));
    // In the schema's order and nothing else (the mappers' output), the same bytes come from JSON.stringify.
    const ordered = {
      id: 'a',
      at: '2026-11-25T10:00:00.000Z',
      n: 0,
      kind: 'A',
      ok: true,
      note: undefined,
      tags: [],
      extra: { '1': 2, b: 3 },
    };
    expect(ser(ordered)).toBe(JSON.stringify(Thing.parse(ordered)));
    expect(ser({ ...ordered, __proto__: { toJSON: () => 'x' } })).toBe(JSON.stringify(Thing.parse(ordered)));
  });

  it('refuse a payload that does not match, with the error zod gives', () => {
    const ser = compile(Thing);
    const good = { id: 'a', at: '2026-11-25T10:00:00.000Z', n: 1, kind: 'A', ok: true, tags: [], extra: {} };
    for (const bad of [
      { ...good, at: 'yesterday' },
      { ...good, n: 1.5 },
      { ...good, n: -1 },
      { ...good, n: Infinity },
      { ...good, kind: 'C' },
      { ...good, ok: false },
      { ...good, tags: ['long'] },
      { ...good, extra: { a: 'x' } },
      { ...good, id: undefined },
      { ...good, at: new Date() },
    ]) {
      expect(() => ser(bad)).toThrow(expect.objectContaining({ code: 'FST_ERR_RESPONSE_SERIALIZATION' }));
    }
  });
});

describe('immutable values', () => {
  const Card = z.object({ id: z.string(), tags: z.array(z.string()) });
  const Wrapper = z.object({ card: Card, at: z.string() });

  it('are written once per schema: a later answer reuses the JSON without reading the value again', () => {
    const card = immutable({ id: 'card-id', tags: ['tag-a', 'tag-b'] });
    // Without zod's check (`verify`), which reads the whole value on every call itself.
    const ser = compile(Wrapper, false);
    // Every string written is first tested for characters to escape: which strings were read, per call.
    const test = vi.spyOn(RegExp.prototype, 'test');
    const written = (at: string) => {
      test.mockClear();
      const json = ser({ card, at });
      return { json, read: test.mock.calls.map(([s]) => s) };
    };
    try {
      expect(written('one')).toEqual({
        json: '{"card":{"id":"card-id","tags":["tag-a","tag-b"]},"at":"one"}',
        read: ['card-id', 'tag-a', 'tag-b', 'one'],
      });
      // The fresh wrapper is written again, the card is not.
      expect(written('two')).toEqual({
        json: '{"card":{"id":"card-id","tags":["tag-a","tag-b"]},"at":"two"}',
        read: ['two'],
      });
    } finally {
      test.mockRestore();
    }
    // Another schema writes it by its own allow-list.
    expect(compile(z.object({ tags: z.array(z.string()) }))(card)).toBe('{"tags":["tag-a","tag-b"]}');
  });

  it('are frozen all the way down, and only plain data is taken', () => {
    const value = immutable({ a: { b: [1, { c: 'x' }] } });
    expect(Object.isFrozen(value.a.b[1])).toBe(true);
    expect(() => (value.a.b as unknown[]).push(2)).toThrow(TypeError);
    expect(() => immutable({ at: new Date() })).toThrow(TypeError);
    expect(() => immutable({ m: new Map() })).toThrow(TypeError);
    const changing = Object.defineProperty({}, 'n', { enumerable: true, get: () => Math.random() });
    expect(() => immutable(changing)).toThrow(/getters/);
    const loop: { self?: unknown } = {};
    loop.self = { back: loop };
    expect(() => immutable(loop)).toThrow(/acyclic/);
  });

  it('leave values never marked to be written afresh every time', () => {
    const ser = compile(Card);
    const card = { id: 'a', tags: ['x'] };
    expect(ser(card)).toBe('{"id":"a","tags":["x"]}');
    card.id = 'b';
    card.tags.push('y');
    expect(ser(card)).toBe('{"id":"b","tags":["x","y"]}');
  });

  it('that do not match their schema are refused every time, never kept', () => {
    const ser = compile(Card);
    const bad = immutable({ id: 1, tags: [] });
    for (let i = 0; i < 2; i++)
      expect(() => ser(bad)).toThrow(expect.objectContaining({ code: 'FST_ERR_RESPONSE_SERIALIZATION' }));
  });
});

describe('UTC timestamps as text', () => {
  it('give what toISOString gives, microseconds cut to milliseconds', () => {
    expect(isoFromUtcText('2026-11-25 15:15:00.657123')).toBe('2026-11-25T15:15:00.657Z');
    expect(isoFromUtcText('2026-11-25 15:15:00.65')).toBe('2026-11-25T15:15:00.650Z');
    expect(isoFromUtcText('2026-11-25 15:15:00')).toBe('2026-11-25T15:15:00.000Z');
    expect(isoFromUtcText('0099-01-02 03:04:05.9')).toBe(new Date('0099-01-02T03:04:05.900Z').toISOString());
  });
});
