import { OPERATIONS, RESOURCES, type FleetResources, type OperationId } from './generated/operations.js';
import type { ClientOptions, RequestOptions } from './options.js';
import { Transport } from './transport.js';

type Spec = (typeof OPERATIONS)[OperationId];
type Method = (...args: unknown[]) => unknown;

/**
 * A client of the Fleet Operations API with one method per operation of openapi.yaml, grouped by resource:
 * `client.assets.list()`, `client.tools.checkout(id, body)`. Arguments: the path parameters in path order,
 * then the JSON body (operations that take one), then the query (operations that take one), then options.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging -- the resources are built at runtime
export class FleetClient {
  private readonly transport: Transport;

  constructor(options: ClientOptions) {
    this.transport = new Transport(options);
    const resources: Record<string, Record<string, Method>> = Object.fromEntries(RESOURCES.map((r) => [r, {}]));
    for (const spec of Object.values(OPERATIONS) as Spec[]) {
      const call = (...args: unknown[]) => this.invoke(spec, args);
      resources[spec.resource][spec.name] = call;
      if (spec.listAll) {
        resources[spec.resource][spec.listAll] = (...args: unknown[]) => this.paginate(spec, call, args);
      }
    }
    Object.assign(this, resources);
  }

  private invoke(spec: Spec, args: unknown[]) {
    const params = spec.pathParams as readonly string[];
    const path = params.reduce(
      (p, name, i) => p.replace(`{${name}}`, encodeURIComponent(String(args[i] ?? ''))),
      spec.path as string,
    );
    const rest = args.slice(params.length);
    const body = spec.body !== 'none' ? rest.shift() : undefined;
    const query = spec.query ? (rest.shift() as Record<string, unknown> | undefined) : undefined;
    const options = rest.shift() as RequestOptions | undefined;
    return this.transport.send(
      {
        method: spec.method,
        path,
        query,
        // POST and PATCH always carry a JSON body, as the API expects; `{}` when the operation takes none.
        body: body ?? (spec.method === 'POST' || spec.method === 'PATCH' ? {} : undefined),
        multipart: spec.multipart,
        response: spec.response,
      },
      options,
    );
  }

  /** Pages through a list: same query and options each time, `cursor` from the previous `nextCursor`. */
  private async *paginate(spec: Spec, call: Method, args: unknown[]): AsyncIterableIterator<unknown> {
    const n = spec.pathParams.length;
    const query = { ...(args[n] as Record<string, unknown> | undefined) };
    const options = args[n + 1] as RequestOptions | undefined;
    let cursor: string | null | undefined;
    do {
      const page = (await call(...args.slice(0, n), cursor ? { ...query, cursor } : query, options)) as Record<
        string,
        unknown
      >;
      for (const item of page[spec.items!] as unknown[]) yield item;
      cursor = page.nextCursor as string | null | undefined;
    } while (cursor);
  }
}

// The methods come from the operation table; this merges their types into the class.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type, @typescript-eslint/no-unsafe-declaration-merging
export interface FleetClient extends FleetResources {}
