import type { FastifyInstance } from 'fastify';
import { renderOpenApiYaml } from './openapi.ts';
import { renderAsyncApiYaml } from './asyncapi.ts';
import { renderPostmanCollection } from './postman.ts';

/**
 * The machine-readable contracts, each generated from code (route schemas, event catalog), committed at the
 * repository root, served at /<file>, rebuilt by `npm run contracts` and verified by `npm run contracts:check`.
 * Add a document here and it is served, written and checked.
 */
export interface ContractDocument {
  file: string;
  contentType: string;
  render(app: FastifyInstance): string;
}

export const CONTRACT_DOCUMENTS: ContractDocument[] = [
  { file: 'openapi.yaml', contentType: 'application/yaml; charset=utf-8', render: renderOpenApiYaml },
  { file: 'asyncapi.yaml', contentType: 'application/yaml; charset=utf-8', render: renderAsyncApiYaml },
  { file: 'postman_collection.json', contentType: 'application/json; charset=utf-8', render: renderPostmanCollection },
];
