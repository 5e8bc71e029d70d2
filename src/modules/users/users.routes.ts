import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../composition.ts';
import { contextOf } from '../../core/context.ts';
import { ErrorResponse, IdParams } from '../../core/schemas.ts';
import {
  CreateUserBody,
  CreateUserResponse,
  ListUsersQuery,
  ListUsersResponse,
  RemoveUserResponse,
  UpdateUserBody,
  UserResponse,
  UserWriteResponse,
} from './users.schemas.ts';

export const userRoutes =
  ({ services }: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const users = services.users;
    const tags = ['users'];
    const read = { scope: 'users:read' } as const;
    const write = { scope: 'users:write' } as const;

    app.get(
      '/users',
      {
        config: read,
        schema: {
          operationId: 'listUsers',
          tags,
          summary: 'List the people of the organisation by email (filter q on name/email)',
          querystring: ListUsersQuery,
          response: { 200: ListUsersResponse },
        },
      },
      (req) => users.list(contextOf(req), req.query),
    );

    app.post(
      '/users',
      {
        config: write,
        schema: {
          operationId: 'createUser',
          tags,
          summary: 'Add a person (422 for a duplicate or invalid email); a removed person is added back',
          body: CreateUserBody,
          response: { 201: CreateUserResponse },
        },
      },
      async (req, reply) => reply.code(201).send(await users.create(contextOf(req), req.body)),
    );

    app.get(
      '/users/:id',
      {
        config: read,
        schema: {
          operationId: 'getUser',
          tags,
          summary: 'A person, removed or not',
          params: IdParams,
          response: { 200: UserResponse },
        },
      },
      (req) => users.get(contextOf(req), req.params.id),
    );

    app.patch(
      '/users/:id',
      {
        config: write,
        schema: {
          operationId: 'updateUser',
          tags,
          summary: "Change a person's name",
          params: IdParams,
          body: UpdateUserBody,
          response: { 200: UserWriteResponse },
        },
      },
      (req) => users.update(contextOf(req), req.params.id, req.body),
    );

    app.delete(
      '/users/:id',
      {
        config: write,
        schema: {
          operationId: 'removeUser',
          tags,
          summary:
            "Remove a person: their keys keep reading but get 403 key_creator_deleted on writes (409 for the calling key's own issuer)",
          params: IdParams,
          response: {
            200: RemoveUserResponse,
            409: ErrorResponse.describe('cannot_remove_key_creator: the calling key was issued by this person'),
          },
        },
      },
      (req) => users.remove(contextOf(req), req.params.id),
    );
  };
