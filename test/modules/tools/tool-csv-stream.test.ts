import { setImmediate as tick } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { TOOL_CSV_COLUMNS, toolCsvStream } from '../../../src/modules/tools/tool-csv.adapter.ts';

const HEADER = `${TOOL_CSV_COLUMNS.map(([name]) => name).join(',')}\r\n`;

/** `count` pages of `bytes` each (a line per page, its number repeated), recording the cursors asked for. */
function pages(count: number, bytes: number, failAt = -1) {
  const asked: (string | undefined)[] = [];
  const line = (n: number) =>
    `${String(n)
      .padStart(4, '0')
      .repeat(bytes / 4 - 1)}\r\n`.slice(-bytes);
  const nextPage = async (cursor: string | undefined) => {
    asked.push(cursor);
    const n = cursor === undefined ? 0 : Number(cursor);
    await tick();
    if (n === failAt) throw new Error('the database went away');
    return { lines: line(n), nextCursor: n + 1 < count ? String(n + 1) : null };
  };
  return { asked, nextPage, all: Array.from({ length: count }, (_, n) => line(n)).join('') };
}

async function settle() {
  for (let i = 0; i < 20; i++) await tick();
}

describe('the tools CSV stream', () => {
  it('reads pages only as the client takes them, one page ahead at most, and writes every byte in order', async () => {
    const source = pages(12, 400_000);
    const stream = toolCsvStream(source.nextPage);
    await settle();
    expect(source.asked).toEqual([]); // nothing until someone reads
    stream.pause();
    stream.read(0);
    await settle();
    // Its buffer fills to about a megabyte (three pages here), then it waits with one more page in flight.
    const early = source.asked.length;
    expect(early).toBeGreaterThanOrEqual(2);
    expect(early).toBeLessThanOrEqual(5);
    expect(stream.readableLength).toBeLessThan(2_000_000);
    await settle();
    expect(source.asked.length).toBe(early);
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe(HEADER + source.all);
    expect(source.asked).toEqual([undefined, ...Array.from({ length: 11 }, (_, i) => String(i + 1))]);
  });

  it('ends after the header when there are no rows', async () => {
    const stream = toolCsvStream(async () => ({ lines: '', nextCursor: null }));
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe(HEADER);
  });

  it('fails the stream with the error of a page', async () => {
    const source = pages(5, 1_000, 3);
    const read = async () => {
      for await (const _ of toolCsvStream(source.nextPage));
    };
    await expect(read()).rejects.toThrow('the database went away');
  });
});
