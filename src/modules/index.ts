import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../composition.ts';
import { assetRoutes } from './assets/assets.routes.ts';
import { metaRoutes } from './meta/meta.routes.ts';

/** Route plugins mounted under /api/v1, in registration order. Add a resource's routes here. */
export const API_MODULES: ((deps: AppDeps) => FastifyPluginAsync)[] = [metaRoutes, assetRoutes];
