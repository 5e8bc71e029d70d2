import type { FastifyInstance, RouteOptions } from 'fastify';
import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';

type Json = Record<string, unknown>;

/**
 * The app's router options. The OpenAPI lister registers the same routes under the same options, so that a route
 * the app accepts is one the document lists. Ids of any length reach the handler (and are 404 when unknown); the
 * header limit bounds the URL anyway.
 */
export const ROUTER_OPTIONS = { ignoreTrailingSlash: true, maxParamLength: 16 * 1024 } as const;

interface RouteTable {
  routes: RouteOptions[];
  publicBaseUrl: string;
  document?: Promise<Json>;
}

// A decoration of the app, so that the instances of its plugins (which handle the document's route) see it too.
const TABLE = Symbol('routeTable');
const tableOf = (app: FastifyInstance) => (app as unknown as Record<symbol, RouteTable | undefined>)[TABLE];

/** @fastify/swagger's options: what the document says of the service besides its routes. */
const swaggerOptions = (publicBaseUrl: string): FastifyDynamicSwaggerOptions => ({
  openapi: {
    openapi: '3.1.0',
    info: {
      title: 'Fleet Operations API',
      version: '1.0.0',
      description:
        'Fleet and shop management: assets, flags, meter logs, work orders, repairs, tools, projects, yards ' +
        'and signed webhooks. All routes live under /api/v1 and take `Authorization: Bearer <API key>`.',
    },
    servers: [{ url: publicBaseUrl }],
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'API key (flt_…)' } },
    },
  },
  transform: jsonSchemaTransform,
  transformObject: jsonSchemaTransformObject,
});

/**
 * Keeps every route added to `app` from here on (as the onRoute hooks added before this one leave it) for the
 * OpenAPI document, as @fastify/swagger's own hook would. The plugin itself is loaded only when a document is
 * asked for (swaggerDocument): registering it at start-up loaded its modules, its YAML writer among them, on
 * every start, for a document most processes never render (docs/adr/0010-lazy-start-up.md).
 */
export function recordRoutes(app: FastifyInstance, publicBaseUrl: string) {
  const routes: RouteOptions[] = [];
  app.decorate(TABLE, { routes, publicBaseUrl });
  // HEAD routes are the ones Fastify adds beside each GET; @fastify/swagger leaves them out too.
  app.addHook('onRoute', (route) => {
    if (route.method !== 'HEAD') routes.push(route);
  });
}

/**
 * What @fastify/swagger makes of the routes recorded on `app` (or on the app whose plugin `app` is), made once:
 * the plugin runs in an instance of its own, given the same routes (the same schema and config objects) with
 * handlers that never run, since it never listens. Its compilers accept anything: the app's own validate and
 * serialise; this one only lists.
 */
export function swaggerDocument(app: FastifyInstance): Promise<Json> {
  const table = tableOf(app);
  if (!table) throw new Error('recordRoutes(app) was not called before the routes were added');
  // A failed build is not kept: the next request tries again.
  table.document ??= build(table).catch((err: unknown) => {
    table.document = undefined;
    throw err;
  });
  return table.document;
}

async function build({ routes, publicBaseUrl }: RouteTable): Promise<Json> {
  const [{ default: Fastify }, { default: swagger }] = await Promise.all([
    import('fastify'),
    import('@fastify/swagger'),
  ]);
  const lister = Fastify({
    schemaController: {
      compilersFactory: {
        buildValidator: (() => () => () => true) as never,
        buildSerializer: (() => () => (data: unknown) => JSON.stringify(data)) as never,
      },
    },
    routerOptions: ROUTER_OPTIONS,
  });
  try {
    await lister.register(swagger, swaggerOptions(publicBaseUrl));
    const handler = () => undefined;
    for (const { method, url, schema, config } of routes) lister.route({ method, url, schema, config, handler });
    await lister.ready();
    return lister.swagger() as unknown as Json;
  } finally {
    await lister.close();
  }
}
