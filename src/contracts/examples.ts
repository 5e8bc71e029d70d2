import { operationsOf } from './openapi-rules.ts';

type Json = Record<string, any>;

/**
 * Examples for every request body and every response media type, built from the schema itself: a schema's own
 * `example` (zod `.meta({ example })`) wins, then `default`, `const`, the first enum member, the format, and
 * finally a value that fits the property's name. Optional properties are included (readers want to see them);
 * nullable ones take their non-null variant. Error answers get their first code and a message for the status.
 * Non-JSON media (CSV, images) carry their example on the schema the route declares; it is lifted to the media
 * type. `scripts/contracts.ts` and the contract tests validate each JSON example against its schema, so an
 * example can never drift from what it illustrates; openapi-checks.ts refuses a media type without one.
 */
export function addExamples(doc: Json): void {
  const schemas: Json = doc.components?.schemas ?? {};
  for (const { op } of operationsOf(doc)) {
    const body = op.requestBody?.content?.['application/json'];
    if (body?.schema && body.example === undefined) body.example = exampleOf(body.schema, schemas, '', 0);
    for (const [code, response] of Object.entries<Json>(op.responses ?? {})) {
      for (const [type, m] of Object.entries<Json>(response.content ?? {})) {
        if (!m?.schema || m.example !== undefined || m.examples !== undefined) continue;
        if (type !== 'application/json') {
          if (m.schema.example !== undefined) {
            m.example = m.schema.example;
            delete m.schema.example;
          }
          continue;
        }
        const example = exampleOf(m.schema, schemas, '', 0);
        if (!code.startsWith('2') && example && typeof example === 'object' && 'message' in example)
          (example as Json).message = ERROR_MESSAGES[code] ?? 'The request failed';
        m.example = example;
      }
    }
  }
}

const ERROR_MESSAGES: Record<string, string> = {
  '400': 'The request is malformed',
  '401': 'Send a valid API key as `Authorization: Bearer <key>`',
  '403': 'This key lacks the scope the route needs',
  '404': 'Not found in this organisation',
  '409': 'The change conflicts with the current state',
  '413': 'The body is larger than the limit',
  '415': 'Send the body as application/json',
  '422': 'The request did not validate; see fieldErrors',
  '429': 'Too many requests; retry after the reset',
  '500': 'Internal error; quote the X-Request-Id in support requests',
  '503': 'Temporarily unavailable; retry shortly',
};

const ID = 'cm4k2x9q10000a8b7c6d5e4f3';
const NAMED: [RegExp, unknown][] = [
  [/^(id|.*Id)$/, ID],
  [/^email$/i, 'dana@example.com'],
  [/^(nickname)$/, 'Excavator 7'],
  [/^(event)$/, 'asset.created'],
  [/^name$/, 'Impact driver 18V'],
  [/^title$/, 'Replace hydraulic hose'],
  [/^(url)$/, 'https://hooks.example.com/fleet'],
  [/^(nextCursor|cursor)$/, 'eyJrIjpbIjIwMjYtMDMtMTQiXX0'],
  [/^(makeModel)$/, 'DeWalt DCF887'],
  [/^(supplier)$/, 'Grainger'],
  [/^(customerAssetNumber)$/, 'EX-0007'],
  [/^(licensePlate)$/, '8ABC123'],
  [/^(licenseState)$/, 'TX'],
  [/^(parts)$/, 'Hydraulic hose 3/8in x 48in'],
  [/^(condition)$/, 'GOOD'],
  [/^(state)$/, 'parked at yard'],
  [/^(address)$/, '4100 Industrial Blvd, Houston TX'],
  [/^(reason)$/, 'already_checked_out'],
  [/^(soldTo)$/, 'Lone Star Equipment'],
  [/^(customerName)$/, 'City of Houston'],
  [/^(meterUnit)$/, 'hrs'],
  [/^(fuelUnit)$/, 'GALLON'],
  [/^(responseBody)$/, '{"received":true}'],
  [/^(secretWarning)$/, 'Store this secret now: it is shown only once.'],
  [/^(vin)$/, '1FTFW1E50PFA12345'],
  [/^(serial)$/, 'SN-448812'],
  [/^(slug)$/, 'acme-earthworks'],
  [/^(code)$/, 'JOB-1042'],
  [/^(scanToken)$/, 'tk_3f9a2b7c8d1e4f5a'],
  [/^(secret)$/, 'whsec_ZXhhbXBsZS1zZWNyZXQtZm9yLXRoZS1hcGktZG9jcyE='],
  [
    /^(disabledReason)$/,
    'disabled automatically: every delivery attempt failed for 5 days since 2026-03-09T09:30:00.000Z',
  ],
  [/^(signaturePreview)$/, 'v1=3b1f…'],
  [/^(commit)$/, '1a2b3c4d5e6f'],
  [/^(branch)$/, 'main'],
  [/^(nodeVersion)$/, 'v20.19.0'],
  [/^(apiVersion)$/, 'v1'],
  [/^(category)$/, 'Power tools'],
  [/^(note|notes|description|resolutionNote|message)$/, 'Hose chafed at the boom pivot'],
  [/(Name|name)$/, 'Dana Ortiz'],
  [/^(label)$/, 'Dispatch integration'],
  [/^(version)$/, '0.1.0'],
  [/^(text)$/, 'What changed for users'],
];

function fromName(name: string): unknown {
  for (const [pattern, value] of NAMED) if (pattern.test(name)) return value;
  return undefined;
}

export function exampleOf(schema: Json | undefined, schemas: Json, name: string, depth: number): unknown {
  if (!schema || depth > 8) return null;
  if (schema.$ref) return exampleOf(schemas[String(schema.$ref).split('/').pop()!], schemas, name, depth + 1);
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0];
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum.find((v: unknown) => v !== null) ?? schema.enum[0];
  const variants: Json[] | undefined = schema.oneOf ?? schema.anyOf;
  // An object with properties and an anyOf of `required` rules (a repair's assetId or workOrderId) is an object.
  if (variants && !(schema.type === 'object' && schema.properties)) {
    const pick = variants.find((v) => v.type !== 'null' && Object.keys(v).length > 0) ?? variants[0];
    return exampleOf(pick, schemas, name, depth + 1);
  }
  if (schema.allOf) {
    return Object.assign({}, ...schema.allOf.map((s: Json) => exampleOf(s, schemas, name, depth + 1) as object));
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const props: Json = schema.properties ?? {};
      if (!Object.keys(props).length && schema.additionalProperties) return { nickname: 'is required' };
      return Object.fromEntries(
        Object.entries(props).map(([k, v]) => [k, exampleOf(v as Json, schemas, k, depth + 1)]),
      );
    }
    case 'array': {
      const item = exampleOf(schema.items, schemas, name, depth + 1);
      return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => item);
    }
    case 'integer':
    case 'number':
      return numberFor(name, schema);
    case 'boolean':
      return true;
    case 'string':
      return stringFor(name, schema);
    case 'null':
      return null;
    default:
      return fromName(name) ?? null;
  }
}

function numberFor(name: string, schema: Json): number {
  const min = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : undefined);
  const guess = /lat$/i.test(name)
    ? 29.76
    : /lng$/i.test(name)
      ? -95.37
      : /(Cost|Price|Value|Rate|Usd)/.test(name)
        ? 1250.5
        : /(hours|Reading)/i.test(name)
          ? 1520.5
          : /(Sec|Ms)$/.test(name)
            ? 3600
            : /(index)$/.test(name)
              ? 0
              : 3;
  const value = schema.type === 'integer' ? Math.round(guess) : guess;
  if (min !== undefined && value < min) return min;
  if (schema.maximum !== undefined && value > schema.maximum) return schema.maximum;
  return value;
}

function stringFor(name: string, schema: Json): string {
  if (schema.format === 'date-time') return '2026-03-14T09:30:00.000Z';
  if (schema.format === 'date') return '2026-03-14';
  if (schema.format === 'uri' || schema.format === 'url') return 'https://hooks.example.com/fleet';
  if (schema.format === 'email') return 'dana@example.com';
  const named = fromName(name);
  let value = typeof named === 'string' ? named : 'Example';
  if (schema.pattern && !new RegExp(schema.pattern, 'u').test(value))
    value = schema.pattern.startsWith('^https://') ? 'https://hooks.example.com/fleet' : value;
  if (schema.maxLength !== undefined) value = value.slice(0, schema.maxLength);
  if (schema.minLength !== undefined && value.length < schema.minLength) value = value.padEnd(schema.minLength, 'x');
  return value;
}
