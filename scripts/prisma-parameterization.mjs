// Rewrites the parameterization schema of the generated Prisma client so that the runtime holds it in a fraction of
// the memory (docs/adr/0085-compact-prisma-parameterization-schema.md). The runtime decodes the schema's graph into
// one object per node whose keys are indices into the schema's strings; V8 stores small integer keys as an array as
// long as the highest index, so most nodes carry an array of holes. Shifting every string index past V8's gap limit
// (the strings list is prefixed with that many empty strings) makes V8 store the same keys as a dictionary.
// The graph's format is the one @prisma/client's runtime reads; a graph that does not decode and re-encode to the
// same bytes (another Prisma version) is left as generated.

/** Past V8's largest gap (1,024) between an array's length and a new index, so every node's keys stay sparse. */
export const STRING_INDEX_SHIFT = 2048;

/** The graph as lists of numbers: input edges [key, scalarMask, childNodeId+1, enumNameIndex+1, flags], etc. */
export function decodeGraph(base64url) {
  const buf = Buffer.from(base64url, 'base64url');
  let at = 0;
  const varint = () => {
    let value = 0;
    let shift = 0;
    let byte;
    do {
      if (at >= buf.length) throw new Error('parameterization graph ends inside a number');
      byte = buf[at++];
      value += (byte & 127) * 2 ** shift;
      shift += 7;
    } while (byte >= 128);
    return value;
  };
  const u16 = () => {
    const value = buf.readUInt16LE(at);
    at += 2;
    return value;
  };
  const [inputCount, outputCount, rootCount] = [varint(), varint(), varint()];
  const list = (count, read) => Array.from({ length: count }, read);
  const inputs = list(inputCount, () => list(varint(), () => [varint(), u16(), varint(), varint(), buf[at++]]));
  const outputs = list(outputCount, () => list(varint(), () => [varint(), varint(), varint()]));
  const roots = list(rootCount, () => [varint(), varint(), varint()]);
  if (at !== buf.length) throw new Error('parameterization graph has trailing bytes');
  return { inputs, outputs, roots };
}

export function encodeGraph({ inputs, outputs, roots }) {
  const out = [];
  const varint = (value) => {
    do {
      let byte = value % 128;
      value = Math.floor(value / 128);
      if (value > 0) byte |= 128;
      out.push(byte);
    } while (value > 0);
  };
  varint(inputs.length);
  varint(outputs.length);
  varint(roots.length);
  for (const edges of inputs) {
    varint(edges.length);
    for (const [key, mask, child, enumName, flags] of edges) {
      varint(key);
      out.push(mask & 255, mask >> 8);
      varint(child);
      varint(enumName);
      out.push(flags);
    }
  }
  for (const edges of outputs) {
    varint(edges.length);
    for (const [key, args, output] of edges) [key, args, output].forEach(varint);
  }
  for (const [key, args, output] of roots) [key, args, output].forEach(varint);
  return Buffer.from(out).toString('base64url');
}

/** Every reference to a string index moved by `by` (an absent enum name, 0, stays absent). */
export function shiftStringIndices({ inputs, outputs, roots }, by) {
  return {
    inputs: inputs.map((edges) =>
      edges.map(([key, mask, child, enumName, flags]) => [key + by, mask, child, enumName && enumName + by, flags]),
    ),
    outputs: outputs.map((edges) => edges.map(([key, args, output]) => [key + by, args, output])),
    roots: roots.map(([key, args, output]) => [key + by, args, output]),
  };
}

const STRINGS = /^(  strings: JSON\.parse\()("(?:[^"\\]|\\.)*")(\),?)$/m;
const GRAPH = /^(  graph: ")([A-Za-z0-9_-]*)(",?)$/m;

/**
 * The generated client's source with its schema compacted; `undefined` when it holds no schema this understands,
 * or one already shifted.
 */
/** The schema's strings and graph as the generated client's source writes them; `undefined` when absent. */
export function readParameterizationSchema(source) {
  const strings = STRINGS.exec(source);
  const graph = GRAPH.exec(source);
  if (!strings || !graph) return undefined;
  return { strings: JSON.parse(JSON.parse(strings[2])), graph: graph[2] };
}

export function compactParameterizationSchema(source) {
  const schema = readParameterizationSchema(source);
  if (!schema) return undefined;
  const { strings: list, graph: encoded } = schema;
  if (list.length >= STRING_INDEX_SHIFT && list.slice(0, STRING_INDEX_SHIFT).every((s) => s === '')) return undefined;
  let decoded;
  try {
    decoded = decodeGraph(encoded);
  } catch {
    return undefined;
  }
  if (encodeGraph(decoded) !== encoded) return undefined;
  const shiftedStrings = [...Array(STRING_INDEX_SHIFT).fill(''), ...list];
  const shiftedGraph = encodeGraph(shiftStringIndices(decoded, STRING_INDEX_SHIFT));
  return source
    .replace(STRINGS, (_, head, _json, tail) => `${head}${JSON.stringify(JSON.stringify(shiftedStrings))}${tail}`)
    .replace(GRAPH, (_, head, _graph, tail) => `${head}${shiftedGraph}${tail}`);
}
