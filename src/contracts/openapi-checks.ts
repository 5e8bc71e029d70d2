import { operationsOf } from './openapi-rules.ts';

type Json = Record<string, any>;

/** The operations open to any valid key, whatever its scopes: what the key itself may see (GET /me). */
export const ANY_KEY_OPERATIONS = new Set(['getMe', 'getMyUsage', 'getOrganization']);

/**
 * What the contract requires of every operation. Returns one line per problem, naming the route and what to
 * add where, so whoever adds a route can fix it from the message alone; `openApiDocument` throws with them.
 */
export function contractProblems(doc: Json): string[] {
  const problems: string[] = [];
  const schemas: Json = doc.components?.schemas ?? {};
  for (const { path, method, op } of operationsOf(doc)) {
    const where = `${method.toUpperCase()} ${path}${op.operationId ? ` (${op.operationId})` : ''}`;
    const say = (what: string) => problems.push(`${where}: ${what}`);
    if (!op.operationId) say('add `operationId` to the route schema');
    if (!op.summary) say('add a `summary` (one line, for people) to the route schema');
    if (!op.tags?.length) say('add `tags` to the route schema');
    if (!Array.isArray(op.security)) say('declare `config.scope` (or `config.public: true`) on the route');
    else if (
      !ANY_KEY_OPERATIONS.has(op.operationId) &&
      op.security.some((requirement: Json) => !Object.values<string[]>(requirement).some((scopes) => scopes.length))
    )
      say(
        '`security` names no scope: declare `config.scope`, or with `scope: null` the `config.subjectScopes` the ' +
          'service checks (or add the operation to ANY_KEY_OPERATIONS if any valid key may call it)',
      );
    const responses = Object.entries<Json>(op.responses ?? {});
    if (!responses.some(([code]) => code.startsWith('2')))
      say('declare the success response in `schema.response` (200/201)');
    for (const [code, response] of responses) {
      if (!response.description || response.description === 'Default Response')
        say(`response ${code} needs a description (\`.describe()\` the schema)`);
      if (!response.content || !Object.keys(response.content).length) continue;
      for (const [type, media] of Object.entries<Json>(response.content)) {
        if (media.example === undefined && media.examples === undefined)
          say(`response ${code} has no example for ${type} (give its schema an \`example\`)`);
      }
      const json = response.content['application/json'];
      if (code.startsWith('2') && json) {
        const body = resolve(json.schema, schemas);
        for (const [field, prop] of Object.entries<Json>(body?.properties ?? {})) {
          if (
            prop.type === 'array' &&
            prop.items &&
            !prop.items.$ref &&
            resolve(prop.items, schemas)?.type === 'object' &&
            body?.properties?.nextCursor
          ) {
            say(`list field \`${field}\` holds an unnamed row schema: name it with \`.meta({ id: '<Resource>Row' })\``);
          }
        }
      }
    }
    for (const [type, media] of Object.entries<Json>(op.requestBody?.content ?? {})) {
      if (media.example === undefined && media.examples === undefined)
        say(`the request body has no example for ${type} (give the media type an \`example\`)`);
    }
  }
  return problems;
}

function resolve(schema: Json | undefined, schemas: Json): Json | undefined {
  return schema?.$ref ? schemas[String(schema.$ref).split('/').pop()!] : schema;
}

export function assertContract(doc: Json): void {
  const problems = contractProblems(doc);
  if (problems.length) {
    throw new Error(
      `The OpenAPI contract is incomplete (${problems.length} problem${problems.length > 1 ? 's' : ''}); fix the routes, not openapi.yaml:\n` +
        problems.map((p) => `  - ${p}`).join('\n'),
    );
  }
}
