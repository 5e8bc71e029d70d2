// Reading an uploaded file as CSV, streamed: the encoding (UTF-8 with or without BOM, else Windows-1252), the
// delimiter, and RFC 4180 records (quoted fields with delimiters, quotes and line breaks). A small reader of our own
// rather than a library: docs/adr/0075-import-csv-reader.md.
import type { Readable } from 'node:stream';
import { detectDelimiter } from './import-values.rules.ts';

/** The file cannot be read as CSV: the import fails with this reason. */
export class FileReadError extends Error {
  constructor(
    readonly code: 'not_csv' | 'unreadable_encoding',
    message: string,
  ) {
    super(message);
  }
}

export interface CsvRecord {
  /** The line of the file the record starts on (1-based). */
  line: number;
  fields: string[];
}

/** Bytes read before the encoding is decided. */
const SNIFF_BYTES = 64 * 1024;
/** A record longer than this is not a spreadsheet row: the file is refused rather than held in memory. */
const MAX_RECORD_CHARS = 1024 * 1024;

async function* decoded(source: AsyncIterable<Buffer>): AsyncGenerator<string> {
  const head: Buffer[] = [];
  let size = 0;
  const iterator = source[Symbol.asyncIterator]();
  let done = false;
  while (size < SNIFF_BYTES) {
    const next = await iterator.next();
    if (next.done) {
      done = true;
      break;
    }
    head.push(next.value);
    size += next.value.length;
  }
  let bytes = Buffer.concat(head);
  if (bytes.includes(0)) throw new FileReadError('not_csv', 'the file holds binary data (NUL bytes), not CSV text');
  let encoding = 'utf-8';
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes = bytes.subarray(3);
  else {
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: !done });
    } catch {
      encoding = 'windows-1252';
    }
  }
  const decoder = new TextDecoder(encoding, { fatal: true });
  const decode = (chunk: Buffer, stream: boolean) => {
    try {
      return decoder.decode(chunk, { stream });
    } catch {
      throw new FileReadError('unreadable_encoding', 'the file is neither UTF-8 throughout nor Windows-1252');
    }
  };
  yield decode(bytes, true);
  while (!done) {
    const next = await iterator.next();
    if (next.done) break;
    if (next.value.includes(0)) throw new FileReadError('not_csv', 'the file holds binary data (NUL bytes)');
    yield decode(next.value, true);
  }
  yield decode(Buffer.alloc(0), false);
}

/**
 * The records of a CSV stream in batches of up to `batchSize`; the first record is the header. Empty lines are
 * not records. `delimiter` null detects it from the first line.
 */
export async function* readCsv(
  source: Readable | AsyncIterable<Buffer>,
  delimiter: string | null,
  batchSize: number,
  onDelimiter: (d: string) => void = () => {},
): AsyncGenerator<CsvRecord[]> {
  let sep = delimiter;
  let batch: CsvRecord[] = [];
  let fields: string[] = [];
  let field = '';
  let quoted = false; // inside a quoted field
  let wasQuoted = false; // the current field started with a quote
  let afterQuote = false; // a quote seen inside a quoted field: an escaped quote or the end
  let line = 1;
  let recordLine = 1;
  let recordChars = 0;
  let pendingCR = false;
  let pending = '';

  const endRecord = () => {
    fields.push(field);
    const empty = fields.length === 1 && fields[0] === '' && !wasQuoted;
    if (!empty) batch.push({ line: recordLine, fields });
    fields = [];
    field = '';
    wasQuoted = false;
    recordChars = 0;
  };

  for await (const chunk0 of decoded(source as AsyncIterable<Buffer>)) {
    let chunk = chunk0;
    if (sep === null) {
      pending += chunk;
      const nl = pending.search(/[\r\n]/);
      if (nl < 0 && chunk0 !== '') continue;
      sep = detectDelimiter(nl < 0 ? pending : pending.slice(0, nl));
      onDelimiter(sep);
      chunk = pending;
      pending = '';
    }
    for (let i = 0; i < chunk.length; i++) {
      const ch = chunk[i]!;
      if (pendingCR) {
        pendingCR = false;
        if (ch === '\n') continue;
      }
      if (++recordChars > MAX_RECORD_CHARS)
        throw new FileReadError('not_csv', `the record starting on line ${recordLine} is longer than 1 MB`);
      if (quoted) {
        if (afterQuote) {
          afterQuote = false;
          if (ch === '"') {
            field += '"';
            continue;
          }
          quoted = false;
          // Falls through: the character after the closing quote is read outside the quotes.
        } else {
          if (ch === '"') afterQuote = true;
          else {
            if (ch === '\n' || ch === '\r') line++;
            if (ch === '\r' && chunk[i + 1] === '\n') {
              field += '\r\n';
              i++;
              continue;
            }
            field += ch;
          }
          continue;
        }
      }
      if (ch === sep) {
        fields.push(field);
        field = '';
        wasQuoted = false;
      } else if (ch === '\n' || ch === '\r') {
        endRecord();
        if (ch === '\r') pendingCR = true;
        line++;
        recordLine = line;
        if (batch.length >= batchSize) {
          yield batch;
          batch = [];
        }
      } else if (ch === '"' && field === '' && !wasQuoted) {
        quoted = true;
        wasQuoted = true;
      } else field += ch;
    }
  }
  if (sep === null) onDelimiter(',');
  if (quoted && !afterQuote)
    throw new FileReadError('not_csv', `the quoted field opened on line ${recordLine} is never closed`);
  if (field !== '' || fields.length > 0 || wasQuoted) endRecord();
  if (batch.length > 0) yield batch;
}

/** One record as CSV text (quoted where needed), for the error report. */
export function csvLine(fields: readonly string[], delimiter = ','): string {
  return fields
    .map((f) =>
      f.includes('"') || f.includes(delimiter) || /[\r\n]/.test(f) || /^\s|\s$/.test(f)
        ? `"${f.replace(/"/g, '""')}"`
        : f,
    )
    .join(delimiter);
}
