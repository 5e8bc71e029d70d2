import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createSerializerCompiler, isCompiled, writerSchema } from '../../src/http/response-serializer.ts';
import { ErrorResponse } from '../../src/core/schemas.ts';
import { ListAssetsResponse } from '../../src/modules/assets/assets.schemas.ts';
import { MeResponse } from '../../src/meta/meta.schemas.ts';
import { HoursCreatedResponse } from '../../src/modules/hours/hours.schemas.ts';
import { isoFromUtcText } from '../../src/db/utc-text.ts';
import { immutable } from '../../src/core/immutable.ts';

/** `verify` (the default here) compiles at once and fails when the writer's output differs from zod's. */
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

describe('response writers', () => {
  it('are compiled for the hot routes and the error body; what JSON Schema cannot describe keeps JSON.stringify', () => {
    for (const schema of [ListAssetsResponse, MeResponse, HoursCreatedResponse, ErrorResponse])
      expect(isCompiled(schema)).toBe(true);
    expect(isCompiled(z.object({ a: z.string().transform((s) => s.length) }))).toBe(false);
    // fast-json-stringify writes required fields first: an optional one declared before a required one would move.
    expect(isCompiled(Thing)).toBe(false);
    expect(isCompiled(Thing.omit({ note: true }).extend({ note: Thing.shape.note }))).toBe(true);
    expect(isCompiled(z.object({ at: z.date() }))).toBe(false);
    // A nullable object is written with an inline null test, not a validator picking a branch.
    expect(JSON.stringify(writerSchema(MeResponse))).not.toContain('anyOf');
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
      id: 'é\n\u2028\ud800',
    };
    const out = ser(data);
    expect(out).toBe(JSON.stringify(Thing.parse(data)));
    expect(out).not.toContain('secret');
    expect(ser({ ...data, note: null })).toBe(JSON.stringify(Thing.parse({ ...data, note: null })));
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

  it('write what zod writes for unions, nullables, records, defaults, loose objects and odd numbers', () => {
    const Tricky = z.object({
      union: z.union([z.string(), z.number()]),
      tagged: z.discriminatedUnion('t', [
        z.object({ t: z.literal('a'), a: z.string() }),
        z.object({ t: z.literal('b'), b: z.number().nullable() }),
      ]),
      maybe: z.object({ x: z.string() }).nullable(),
      list: z.array(z.object({ y: z.number() }).nullable()),
      map: z.record(z.string(), z.object({ z: z.boolean() })),
      withDefault: z.string().default('dflt'),
      loose: z.looseObject({ k: z.string() }),
      big: z.number(),
      literal: z.union([z.literal('x'), z.literal(2), z.null()]),
      constant: z.literal('c').nullable(),
      anything: z.unknown(),
    });
    expect(isCompiled(Tricky)).toBe(true);
    const ser = compile(Tricky);
    const base = {
      union: 1,
      tagged: { t: 'b', b: null, a: 'not sent' },
      maybe: null,
      list: [null, { y: -0 }, { y: 1e21 }],
      map: { b: { z: true, extra: 1 }, a: { z: false }, '2': { z: true } },
      anything: { nested: [1, 'two', null] },
      loose: { extra: 'kept', k: 'v', more: [1] },
      big: Number.MAX_VALUE,
      literal: 2,
      constant: null,
    };
    for (const data of [
      base,
      { ...base, union: 'one', tagged: { t: 'a', a: 'x' }, maybe: { x: 'y', no: 1 }, withDefault: 'given' },
      { ...base, anything: undefined, literal: null, big: 5e-324, constant: 'c' },
    ])
      expect(ser(data)).toBe(JSON.stringify(Tricky.parse(data)));
  });

  it('are built on the second answer of a route (the first is JSON.stringify of zod output); all are checked', () => {
    const ser = compile(Thing, false);
    const good = { id: 'a', at: '2026-11-25T10:00:00.000Z', n: 1, kind: 'A', ok: true, tags: [], extra: {}, x: 1 };
    const expected = JSON.stringify(Thing.parse(good));
    for (let i = 0; i < 3; i++) {
      expect(ser(good)).toBe(expected);
      expect(() => ser({ ...good, n: 'one' })).toThrow(
        expect.objectContaining({ code: 'FST_ERR_RESPONSE_SERIALIZATION' }),
      );
    }
  });

  it('refuse a payload that does not match, with the error zod gives', () => {
    const ser = compile(Thing);
    const good = { id: 'a', at: '2026-11-25T10:00:00.000Z', n: 1, kind: 'A', ok: true, tags: [], extra: {} };
    for (const bad of [
      { ...good, at: 'yesterday' },
      { ...good, n: 1.5 },
      { ...good, n: -1 },
      { ...good, n: Infinity },
      { ...good, n: 2 ** 53 },
      { ...good, kind: 'C' },
      { ...good, ok: false },
      { ...good, tags: ['long'] },
      { ...good, extra: { a: 'x' } },
      { ...good, id: undefined },
      { ...good, id: 1 },
      { ...good, at: new Date() },
    ]) {
      expect(() => ser(bad)).toThrow(expect.objectContaining({ code: 'FST_ERR_RESPONSE_SERIALIZATION' }));
    }
  });
});

describe('immutable values', () => {
  const Card = z.object({ id: z.string(), tags: z.array(z.string()) });

  it('are checked and written once per schema when a whole answer is one: later answers reuse its JSON', () => {
    let checks = 0;
    const Counted = z.object({ id: z.string().refine(() => ++checks > 0), tags: z.array(z.string()) });
    const card = immutable({ id: 'card-id', tags: ['tag-a', 'tag-b'] });
    const ser = compile(Counted, false);
    for (let i = 0; i < 3; i++) expect(ser(card)).toBe('{"id":"card-id","tags":["tag-a","tag-b"]}');
    expect(checks).toBe(1);
    // A value never marked is checked every time; another schema writes the card by its own allow-list.
    expect(ser({ ...card })).toBe('{"id":"card-id","tags":["tag-a","tag-b"]}');
    expect(checks).toBe(2);
    expect(compile(z.object({ tags: z.array(z.string()) }))(card)).toBe('{"tags":["tag-a","tag-b"]}');
    // Inside a fresh answer, an immutable part is checked and written with it (zod has no partial check).
    expect(compile(z.object({ card: Counted }), false)({ card })).toBe(
      '{"card":{"id":"card-id","tags":["tag-a","tag-b"]}}',
    );
    expect(checks).toBe(3);
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
