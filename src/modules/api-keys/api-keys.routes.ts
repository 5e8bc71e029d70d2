import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../composition.ts';
import { contextOf } from '../../core/context.ts';
import { ErrorResponse, IdParams } from '../../core/schemas.ts';
import {
  ApiKeyResponse,
  CreateApiKeyBody,
  CreateApiKeyResponse,
  ListApiKeysQuery,
  ListApiKeysResponse,
  RevokeApiKeyResponse,
  RollApiKeyBody,
  RollApiKeyResponse,
} from './api-keys.schemas.ts';

export const apiKeyRoutes =
  ({ services }: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const keys = services.apiKeys;
    const tags = ['api-keys'];
    const read = { scope: 'keys:read' } as const;
    const write = { scope: 'keys:write' } as const;
    const escalation = ErrorResponse.describe(
      'missing_scope:<scope>, key_creator_deleted, or the key would exceed the calling key: scope_escalation, rate_limit_escalation, expiry_escalation',
    );

    app.get(
      '/api-keys',
      {
        config: read,
        schema: {
          operationId: 'listApiKeys',
          tags,
          summary: "List the organisation's API keys, newest first, revoked ones included",
          querystring: ListApiKeysQuery,
          response: { 200: ListApiKeysResponse },
        },
      },
      (req) => keys.list(contextOf(req), req.query),
    );

    app.post(
      '/api-keys',
      {
        config: write,
        schema: {
          operationId: 'createApiKey',
          tags,
          summary:
            "Issue a key within the calling key's scopes, rate limit and expiry (403 scope_escalation); the plaintext is returned once",
          body: CreateApiKeyBody,
          response: { 201: CreateApiKeyResponse, 403: escalation },
        },
      },
      async (req, reply) => reply.code(201).send(await keys.create(contextOf(req), req.key!, req.body)),
    );

    app.get(
      '/api-keys/:id',
      {
        config: read,
        schema: {
          operationId: 'getApiKey',
          tags,
          summary: "An API key's summary (never the key or its hash)",
          params: IdParams,
          response: { 200: ApiKeyResponse },
        },
      },
      (req) => keys.get(contextOf(req), req.params.id),
    );

    app.delete(
      '/api-keys/:id',
      {
        config: write,
        schema: {
          operationId: 'revokeApiKey',
          tags,
          summary: 'Revoke a key (a key may revoke itself); effective within the auth-cache delay',
          params: IdParams,
          response: { 200: RevokeApiKeyResponse },
        },
      },
      (req) => keys.revoke(contextOf(req), req.params.id),
    );

    app.post(
      '/api-keys/:id/roll',
      {
        config: write,
        schema: {
          operationId: 'rollApiKey',
          tags,
          summary:
            'Replace a key with a new one (same label, scopes, limits); the old one works for expireOldInSeconds (default 0, max 7 days)',
          params: IdParams,
          body: RollApiKeyBody,
          response: {
            201: RollApiKeyResponse,
            403: escalation,
            409: ErrorResponse.describe('key_revoked, key_expired, or key_already_rolled (roll its successor instead)'),
          },
        },
      },
      async (req, reply) => reply.code(201).send(await keys.roll(contextOf(req), req.key!, req.params.id, req.body)),
    );
  };
