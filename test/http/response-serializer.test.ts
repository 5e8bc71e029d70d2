import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createSerializerCompiler, isCompiled } from '../../src/http/response-serializer.ts';
import { ErrorResponse } from '../../src/core/schemas.ts';
import { ListAssetsResponse } from '../../src/modules/assets/assets.schemas.ts';
import { MeResponse } from '../../src/modules/meta/meta.schemas.ts';
import { HoursCreatedResponse } from '../../src/modules/hours/hours.schemas.ts';
import { isoFromUtcText } from '../../src/db/utc-text.ts';
import { immutable } from '../../src/core/immutable.ts';

const compile = (schema: z.ZodType) =>
  createSerializerCompiler({ verify: true })({ schema, method: 'GET', url: '/x', httpStatus: '200' } as never) as (
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
    let reads = 0;
    const card = { tags: ['a', 'b'] } as { id: string; tags: string[] };
    Object.defineProperty(card, 'id', { enumerable: true, get: () => `c${++reads}` });
    immutable(card); // reads the getter once as it freezes what it holds
    // Without the check against zod (`verify`), which would read the getter on every call itself.
    const ser = createSerializerCompiler()({ schema: Wrapper, method: 'GET', url: '/x' } as never) as (
      data: unknown,
    ) => string;
    const first = ser({ card, at: 'one' });
    expect(first).toBe('{"card":{"id":"c2","tags":["a","b"]},"at":"one"}');
    expect(reads).toBe(2);
    // The fresh wrapper is written again, the card is not.
    expect(ser({ card, at: 'two' })).toBe('{"card":{"id":"c2","tags":["a","b"]},"at":"two"}');
    expect(reads).toBe(2);
    // Another schema writes it by its own allow-list.
    expect(compile(z.object({ tags: z.array(z.string()) }))(card)).toBe('{"tags":["a","b"]}');
  });

  it('are frozen all the way down, and only plain data is taken', () => {
    const value = immutable({ a: { b: [1, { c: 'x' }] } });
    expect(Object.isFrozen(value.a.b[1])).toBe(true);
    expect(() => (value.a.b as unknown[]).push(2)).toThrow(TypeError);
    expect(() => immutable({ at: new Date() })).toThrow(TypeError);
    expect(() => immutable({ m: new Map() })).toThrow(TypeError);
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
