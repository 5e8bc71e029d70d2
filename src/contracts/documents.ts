import type { FastifyInstance } from 'fastify';

/**
 * The machine-readable contracts, each generated from code (route schemas, event catalog), committed at the
 * repository root, served at /<file>, rebuilt by `npm run contracts` and verified by `npm run contracts:check`.
 * Add a document here and it is served, written and checked. Renderers load on first use: the YAML writer and
 * the event examples stay out of a server's start-up and memory until someone asks for a document.
 */
export interface ContractDocument {
  file: string;
  contentType: string;
  render(app: FastifyInstance): Promise<string>;
}

export const CONTRACT_DOCUMENTS: ContractDocument[] = [
  {
    file: 'openapi.yaml',
    contentType: 'application/yaml; charset=utf-8',
    render: async (app) => (await import('./openapi.ts')).renderOpenApiYaml(app),
  },
  {
    file: 'asyncapi.yaml',
    contentType: 'application/yaml; charset=utf-8',
    render: async () => (await import('./asyncapi.ts')).renderAsyncApiYaml(),
  },
  {
    file: 'postman_collection.json',
    contentType: 'application/json; charset=utf-8',
    render: async (app) => (await import('./postman.ts')).renderPostmanCollection(app),
  },
];
