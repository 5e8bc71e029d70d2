import { describe, expect, it } from 'vitest';
import { FileReadError, readCsv } from '../../../src/modules/imports/import-csv.adapter.ts';

async function records(bytes: Buffer | string, chunk = 3, delimiter: string | null = null) {
  const buf = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
  async function* source() {
    for (let i = 0; i < buf.length; i += chunk) yield buf.subarray(i, i + chunk);
  }
  const out: { line: number; fields: string[] }[] = [];
  let detected = '';
  for await (const batch of readCsv(source(), delimiter, 2, (d) => (detected = d))) out.push(...batch);
  return { out, detected };
}

describe('readCsv', () => {
  it('reads RFC 4180 quoting across chunk boundaries, with line numbers', async () => {
    const { out, detected } = await records('a,b,c\r\n"x, y","say ""hi""","two\r\nlines"\r\n\r\n1,2,3\n');
    expect(detected).toBe(',');
    expect(out).toEqual([
      { line: 1, fields: ['a', 'b', 'c'] },
      { line: 2, fields: ['x, y', 'say "hi"', 'two\r\nlines'] },
      { line: 5, fields: ['1', '2', '3'] },
    ]);
  });

  it('keeps trailing delimiters as empty cells and skips empty lines', async () => {
    const { out } = await records('a;b;\n1;2;\n\n\n3;4;', 4);
    expect(out.map((r) => r.fields)).toEqual([
      ['a', 'b', ''],
      ['1', '2', ''],
      ['3', '4', ''],
    ]);
  });

  it('strips a UTF-8 BOM and reads Windows-1252 when the bytes are not UTF-8', async () => {
    const bom = await records(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('name\nRené\n')]));
    expect(bom.out.map((r) => r.fields[0])).toEqual(['name', 'René']);
    const cp = await records(Buffer.concat([Buffer.from('name\nRen'), Buffer.from([0xe9, 0x80]), Buffer.from('\n')]));
    expect(cp.out.map((r) => r.fields[0])).toEqual(['name', 'René€']);
  });

  it('refuses binary data and an unclosed quote', async () => {
    await expect(records(Buffer.from([0x41, 0x00, 0x42]))).rejects.toBeInstanceOf(FileReadError);
    await expect(records('a,b\n"open,1\n')).rejects.toThrow(/never closed/);
  });

  it('takes a declared delimiter over detection', async () => {
    const { out } = await records('a;b,c\n1;2,3\n', 5, ',');
    expect(out[1]!.fields).toEqual(['1;2', '3']);
  });
});
