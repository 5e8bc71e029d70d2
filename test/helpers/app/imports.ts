import type { TestApp, Res } from './test-app.ts';
import { multipart } from './attachments.ts';

/** Starts an import of a CSV text (multipart), waits for validation, and returns the import. */
export async function startImport(
  t: TestApp,
  key: string,
  type: string,
  csv: string | Buffer,
  fields: { mapping?: unknown; options?: unknown; mappingId?: string } = {},
): Promise<Res> {
  const text: Record<string, string> = { type };
  if (fields.mappingId) text.mappingId = fields.mappingId;
  if (fields.mapping) text.mapping = JSON.stringify(fields.mapping);
  if (fields.options) text.options = JSON.stringify(fields.options);
  const { payload, headers } = multipart(text, {
    name: 'import.csv',
    type: 'text/csv',
    bytes: typeof csv === 'string' ? Buffer.from(csv) : csv,
  });
  const res = (await t.app.inject({
    method: 'POST',
    url: '/api/v1/imports',
    headers: { ...headers, authorization: `Bearer ${key}` },
    payload,
  })) as Res;
  await t.deps.background.idle();
  return res;
}

/** An import's detail once its background work has settled. */
export async function importOf(t: TestApp, key: string, id: string) {
  await t.deps.background.idle();
  return (await t.api.get(`/api/v1/imports/${id}`, key)).json().import;
}

/** Validates, commits and waits: the import as it ended. */
export async function importAndCommit(t: TestApp, key: string, type: string, csv: string, fields = {}) {
  const res = await startImport(t, key, type, csv, fields);
  const id = res.json().importId as string;
  const commit = await t.api.post(`/api/v1/imports/${id}/commit`, key);
  return { id, commit, import: await importOf(t, key, id) };
}
