import { describe, expect, it } from 'vitest';
import { contractProblems } from '../../src/contracts/openapi-checks.ts';
import { postmanCollection } from '../../src/contracts/postman.ts';

// A route another engineer might add: no summary, no tags, no description or example on its answer.
const doc = {
  components: { schemas: {} },
  paths: {
    '/api/v1/widgets': {
      get: {
        operationId: 'listWidgets',
        security: [{ bearerAuth: ['widgets:read'] }],
        responses: {
          404: {
            description: 'Not found',
            content: { 'text/plain': { schema: { type: 'string' } } },
          },
          200: {
            description: 'Default Response',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: { widgets: { type: 'array', items: { type: 'object' } }, nextCursor: { type: 'string' } },
                },
              },
            },
          },
        },
      },
      // An upload whose body has no example, open to any key although the service will want a scope.
      post: {
        operationId: 'uploadWidgetPhoto',
        summary: 'Upload a photo',
        tags: ['widgets'],
        security: [{ bearerAuth: [] }],
        requestBody: { content: { 'multipart/form-data': { schema: { type: 'object' } } } },
        responses: { 201: { description: 'Stored' } },
      },
    },
  },
};

describe('the contract generator fails loudly on incomplete routes', () => {
  it('names the route and what to add', () => {
    const problems = contractProblems(doc);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^GET \/api\/v1\/widgets \(listWidgets\): add a `summary`/),
        expect.stringMatching(/add `tags`/),
        expect.stringMatching(/response 200 needs a description/),
        expect.stringMatching(/response 200 has no example/),
        expect.stringMatching(/response 404 has no example for text\/plain/),
        expect.stringMatching(/list field `widgets` holds an unnamed row schema/),
        expect.stringMatching(/^POST \/api\/v1\/widgets \(uploadWidgetPhoto\): `security` names no scope/),
        expect.stringMatching(/uploadWidgetPhoto\): the request body has no example for multipart\/form-data/),
      ]),
    );
  });

  it('refuses a Postman collection without a walkthrough step for an operation', () => {
    expect(() => postmanCollection(doc)).toThrow(/no step for: listWidgets, uploadWidgetPhoto.*walkthrough/s);
  });
});
