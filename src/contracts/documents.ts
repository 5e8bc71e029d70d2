import type { FastifyInstance } from 'fastify';

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
  { file: 'openapi.yaml', contentType: 'application/yaml; charset=utf-8', render: (app) => app.swagger({ yaml: true }) },
];
