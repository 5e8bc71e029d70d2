import type { OperationSource } from './sdk-naming.ts';

const pascal = (s: string) => s[0].toUpperCase() + s.slice(1);
const q = (s: string) => `'${s}'`;

function types(op: OperationSource) {
  const id = q(op.operationId);
  const query = op.queryParams.length ? `${pascal(op.operationId)}Query` : null;
  const body =
    op.body === 'none'
      ? null
      : op.multipart
        ? `UploadInput<NonNullable<operations[${id}]['requestBody']>['content']['multipart/form-data']> | FormData`
        : (op.bodyRef ?? `NonNullable<operations[${id}]['requestBody']>['content']['application/json']`);
  const response =
    op.responseKind === 'binary'
      ? 'Blob'
      : op.responseKind === 'none'
        ? 'void'
        : (op.responseRef ?? `operations[${id}]['responses'][${op.success}]['content']['application/json']`);
  return { query, body, response };
}

function signatures(op: OperationSource): string[] {
  const t = types(op);
  const path = op.pathParams.map((p) => `${p}: string`);
  const body = t.body ? [`body${op.body === 'required' ? '' : '?'}: ${t.body}`] : [];
  const query = t.query ? [`query${op.queryRequired ? '' : '?'}: ${t.query}`] : [];
  const doc = `  /** ${op.summary.replace(/\*\//g, '* /')} — \`${op.method} ${op.path}\` (${op.operationId}) */`;
  const textOverload =
    op.textFormat && t.query
      ? [
          doc,
          `  ${op.name}(${[...path, ...body, `query: ${t.query} & { format: '${op.textFormat}' }`, 'options?: RequestOptions'].join(', ')}): Promise<string>;`,
        ]
      : [];
  const lines = [
    ...textOverload,
    doc,
    `  ${op.name}(${[...path, ...body, ...query, 'options?: RequestOptions'].join(', ')}): Promise<${t.response}>;`,
  ];
  if (op.listAllName && t.query) {
    lines.push(
      `  /** Every item of ${op.name}, page after page (follows \`nextCursor\`). */`,
      `  ${op.listAllName}(${[...path, `query?: Omit<${t.query}, 'cursor'>`, 'options?: RequestOptions'].join(', ')}): ` +
        `AsyncIterableIterator<${t.response}['${op.items}'][number]>;`,
    );
  }
  return lines;
}

export function renderOperations(ops: OperationSource[]): string {
  const resources = [...new Set(ops.map((o) => o.resource))];
  const refs = [...new Set(ops.flatMap((o) => [o.bodyRef, o.responseRef]).filter((r): r is string => !!r))];
  const table = ops.map((op) =>
    [
      `  ${op.operationId}: {`,
      `    resource: ${q(op.resource)},`,
      `    name: ${q(op.name)},`,
      `    listAll: ${op.listAllName ? q(op.listAllName) : 'null'},`,
      `    method: ${q(op.method)},`,
      `    path: ${q(op.path)},`,
      `    pathParams: [${op.pathParams.map(q).join(', ')}],`,
      `    query: ${op.queryParams.length > 0},`,
      `    body: ${q(op.body)},`,
      `    multipart: ${op.multipart},`,
      `    response: ${q(op.responseKind)},`,
      `    items: ${op.items ? q(op.items) : 'null'},`,
      `    public: ${op.public},`,
      '  },',
    ].join('\n'),
  );
  const queryTypes = ops
    .filter((op) => op.queryParams.length)
    .map(
      (op) =>
        `export type ${pascal(op.operationId)}Query = NonNullable<operations['${op.operationId}']['parameters']['query']>;`,
    );
  const interfaces = resources.map((r) => {
    const members = ops.filter((o) => o.resource === r).flatMap(signatures);
    return `export interface ${pascal(r)}Resource {\n${members.join('\n')}\n}`;
  });
  return `import type { operations } from './openapi.js';
import type { ${refs.join(', ')} } from './schemas.js';
import type { RequestOptions } from '../options.js';
import type { UploadInput } from '../uploads.js';

/** How to call each operation of openapi.yaml; the client builds its methods from this table. */
export const OPERATIONS = {
${table.join('\n')}
} as const;

export type OperationId = keyof typeof OPERATIONS;
export type OperationSpec = (typeof OPERATIONS)[OperationId];

/** The resources of a FleetClient, each with one method per operation. */
export const RESOURCES = [${resources.map(q).join(', ')}] as const;

${queryTypes.join('\n')}

${interfaces.join('\n\n')}

export interface FleetResources {
${resources.map((r) => `  ${r}: ${pascal(r)}Resource;`).join('\n')}
}
`;
}
