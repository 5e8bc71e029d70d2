/**
 * SDK method names, derived from each operation's first tag (the resource: `work-orders` -> `workOrders`)
 * and its operationId with the resource's noun taken out (`checkoutTool` -> `tools.checkout`,
 * `listWebhookDeliveries` -> `webhooks.listDeliveries`). Operations without the noun keep their id
 * (`meta.getHealth`). Paginated lists get an auto-paginating twin (`list` -> `listAll`,
 * `listEvents` -> `listAllEvents`). Deterministic; a collision fails generation instead of shadowing.
 */
export interface OperationSource {
  operationId: string;
  tag: string;
  summary: string;
  method: string;
  path: string;
  pathParams: string[];
  queryParams: string[];
  queryRequired: boolean;
  body: 'none' | 'optional' | 'required';
  bodyRef: string | null;
  /** The body is multipart/form-data (a file upload), sent from an UploadInput or a FormData. */
  multipart: boolean;
  success: number;
  responseKind: 'json' | 'binary' | 'none';
  responseRef: string | null;
  /** The array property a paginated list answers with; null when the operation does not page. */
  items: string | null;
  /** The `format` query value that makes a JSON operation answer text instead (e.g. `csv`). */
  textFormat: string | null;
  public: boolean;
  resource: string;
  name: string;
  listAllName: string | null;
}

/** FleetClient's own members: a resource may not take their names. */
const RESERVED = new Set(['transport', 'invoke', 'paginate', 'constructor', 'then']);

/** Nouns whose singular is not the plural minus its final `s`. */
const SINGULAR: Record<string, string> = { hours: 'HoursLog' };

const pascal = (tag: string) =>
  tag
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('');

export const resourceName = (tag: string) => {
  const p = pascal(tag);
  return p[0].toLowerCase() + p.slice(1);
};

export function methodName(tag: string, operationId: string): string {
  const plural = pascal(tag);
  const nouns = [plural, SINGULAR[tag] ?? plural.replace(/s$/, '')].sort((a, b) => b.length - a.length);
  for (const noun of nouns) {
    // The noun must start a camel-case word and end one (`Asset` in `checkoutAsset`, not in `AssetsBatch`).
    const at = new RegExp(`(?<=[a-z0-9])${noun}(?=[A-Z0-9]|$)`).exec(operationId);
    if (!at) continue;
    const rest = operationId.slice(0, at.index) + operationId.slice(at.index + noun.length);
    if (rest) return rest[0].toLowerCase() + rest.slice(1);
  }
  return operationId;
}

export const listAllName = (name: string) => (/^list([A-Z]|$)/.test(name) ? `listAll${name.slice(4)}` : `${name}All`);

export function sdkMethodNames(ops: Omit<OperationSource, 'resource' | 'name' | 'listAllName'>[]): OperationSource[] {
  const taken = new Map<string, string>();
  const claim = (qualified: string, operationId: string) => {
    const other = taken.get(qualified);
    if (other) throw new Error(`SDK method ${qualified} would serve both ${other} and ${operationId}`);
    taken.set(qualified, operationId);
  };
  return ops.map((op) => {
    const resource = resourceName(op.tag);
    if (RESERVED.has(resource)) throw new Error(`tag ${op.tag} would shadow FleetClient's own ${resource}`);
    const name = methodName(op.tag, op.operationId);
    const all = op.items ? listAllName(name) : null;
    claim(`${resource}.${name}`, op.operationId);
    if (all) claim(`${resource}.${all}`, op.operationId);
    return { ...op, resource, name, listAllName: all };
  });
}
