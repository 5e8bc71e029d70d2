import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  compactParameterizationSchema,
  decodeGraph,
  encodeGraph,
  readParameterizationSchema,
  shiftStringIndices,
  STRING_INDEX_SHIFT,
} from '../../scripts/prisma-parameterization.mjs';

const CLIENT = new URL('../../src/generated/prisma/internal/class.ts', import.meta.url);

const schemaOf = (source: string) => readParameterizationSchema(source)!;

describe("the generated client's parameterization schema", () => {
  const generated = schemaOf(readFileSync(CLIENT, 'utf8'));
  const decoded = decodeGraph(generated.graph);

  it('is compacted by npm run generate: every string index past the shift, the strings prefixed with blanks', () => {
    expect(generated.strings.slice(0, STRING_INDEX_SHIFT)).toEqual(Array(STRING_INDEX_SHIFT).fill(''));
    expect(generated.strings.length).toBeGreaterThan(STRING_INDEX_SHIFT + 100);
    const keys = [...decoded.inputs.flat(), ...decoded.outputs.flat(), ...decoded.roots].map((edge) => edge[0]);
    expect(keys.length).toBeGreaterThan(1000);
    expect(keys.every((k) => k >= STRING_INDEX_SHIFT && k < generated.strings.length)).toBe(true);
    const enumNames = decoded.inputs
      .flat()
      .map((edge) => edge[3])
      .filter((e) => e !== 0);
    expect(enumNames.every((e) => e - 1 >= STRING_INDEX_SHIFT)).toBe(true);
  });

  it('names the same strings and nodes as the schema Prisma generated', () => {
    // Shifted back, the graph and the strings are the generated ones, byte for byte.
    const original = encodeGraph(shiftStringIndices(decoded, -STRING_INDEX_SHIFT));
    const strings = generated.strings.slice(STRING_INDEX_SHIFT);
    const source = `config.parameterizationSchema = {\n  strings: JSON.parse(${JSON.stringify(JSON.stringify(strings))}),\n  graph: "${original}"\n}\n`;
    const compacted = compactParameterizationSchema(source)!;
    expect(schemaOf(compacted)).toEqual(generated);
    const name = (k: number, list: string[], shift: number) => list[k - shift];
    expect(decodeGraph(original).roots.map(([k]) => name(k, strings, 0))).toEqual(
      decoded.roots.map(([k]) => name(k, generated.strings, 0)),
    );
  });

  it('leaves a schema alone when it is already compacted or not in the format it knows', () => {
    const source = readFileSync(CLIENT, 'utf8');
    expect(compactParameterizationSchema(source)).toBeUndefined();
    const bad = `  strings: JSON.parse("[\\"a\\"]"),\n  graph: "AQID_w"\n`;
    expect(compactParameterizationSchema(bad)).toBeUndefined();
    expect(compactParameterizationSchema('export {}')).toBeUndefined();
  });
});
