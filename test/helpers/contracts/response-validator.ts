import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';

// ajv-formats is CommonJS: under NodeNext its default import is the module object.
const addFormats = formats.default;

type Json = Record<string, any>;

export interface Answer {
  method: string;
  /** Request path without the query, e.g. /api/v1/assets/abc. */
  path: string;
  status: number;
  headers: Record<string, unknown>;
  body: string;
}

/**
 * An independent check of answers against the published document (not the route schemas): the operation is
 * found by path template, and the status, media type, body (Ajv, JSON Schema 2020-12) and required headers
 * must all be what openapi.yaml says. Returns the violations, empty when the answer conforms.
 */
export function createResponseValidator(doc: Json) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema({ $id: 'openapi.json', components: doc.components }, 'openapi.json');
  const compiled = new Map<string, ReturnType<typeof ajv.compile>>();
  const templates = Object.keys(doc.paths).map((template) => ({
    template,
    pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
    literal: template.split('/').filter((s) => !s.startsWith('{')).length,
  }));
  // Keyed by the schema's text: most error answers of the document share one, which is then compiled once.
  const validatorOf = (schema: unknown) => {
    const text = JSON.stringify(schema).replaceAll('"#/components/', '"openapi.json#/components/');
    let check = compiled.get(text);
    if (!check) compiled.set(text, (check = ajv.compile(JSON.parse(text))));
    return check;
  };

  function operationOf(method: string, path: string) {
    const match = templates.filter((t) => t.pattern.test(path)).sort((a, b) => b.literal - a.literal)[0];
    return match
      ? { template: match.template, op: doc.paths[match.template][method.toLowerCase()] as Json | undefined }
      : undefined;
  }

  function validate(answer: Answer): string[] {
    const found = operationOf(answer.method, answer.path);
    const where = `${answer.method} ${answer.path} -> ${answer.status}`;
    if (!found?.op) return [`${where}: no such operation in the document`];
    const response: Json | undefined = found.op.responses[String(answer.status)];
    if (!response) return [`${where}: status not documented for ${found.op.operationId}`];
    const problems: string[] = [];
    for (const [name, header] of Object.entries<Json>(response.headers ?? {})) {
      const resolved = header.$ref ? doc.components.headers[header.$ref.split('/').pop()] : header;
      const value = answer.headers[name.toLowerCase()];
      if (value === undefined) {
        if (resolved.required) problems.push(`${where}: required header ${name} missing`);
        continue;
      }
      if (resolved.schema?.type === 'integer' && !/^\d+$/.test(String(value)))
        problems.push(`${where}: header ${name} is not an integer: ${value}`);
    }
    const mediaType = String(answer.headers['content-type'] ?? '')
      .split(';')[0]
      .trim();
    const content: Json = response.content ?? {};
    if (!Object.keys(content).length) return problems;
    const media = content[mediaType];
    if (!media)
      return [
        ...problems,
        `${where}: media type ${mediaType || '(none)'} not documented (${Object.keys(content).join(', ')})`,
      ];
    if (mediaType !== 'application/json') return problems;
    const check = validatorOf(media.schema);
    let body: unknown;
    try {
      body = JSON.parse(answer.body);
    } catch {
      return [...problems, `${where}: body is not JSON`];
    }
    if (!check(body)) problems.push(`${where}: ${ajv.errorsText(check.errors)}`);
    return problems;
  }

  return { validate, operationOf };
}
