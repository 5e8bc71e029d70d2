// Multipart uploads (POST /attachments): the file from a path (Node), a Blob/File, or a stream, sent without
// reading it whole into memory.

/** A Node.js readable (anything async-iterable over byte chunks) or a web ReadableStream of bytes. */
export type ByteStream = AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>;

/**
 * The multipart fields of an upload operation, with `file` as a path on disk (Node.js only), a Blob or File,
 * or a stream; `filename` names it when the source has no name of its own (a stream, a Blob).
 */
export type UploadInput<Fields> = Omit<Fields, 'file'> & {
  file: string | Blob | ByteStream;
  filename?: string;
  /** Sent as the file part's Content-Type; the server detects the type from the bytes anyway. */
  contentType?: string;
};

export interface EncodedUpload {
  body: FormData | ReadableStream<Uint8Array>;
  /** Set for a streamed body (FormData bodies get theirs from fetch). */
  contentType?: string;
  /** A streamed body can be sent once only: no retry. */
  replayable: boolean;
  /** fetch needs `duplex: 'half'` to send a stream. */
  streamed: boolean;
}

const isBlob = (v: unknown): v is Blob => typeof Blob !== 'undefined' && v instanceof Blob;
const baseName = (p: string) => p.split(/[\\/]/).pop() || 'file';
const quote = (s: string) => s.replace(/[\r\n"\\]/g, (c) => encodeURIComponent(c));

async function* chunks(stream: ByteStream): AsyncIterable<Uint8Array> {
  if (Symbol.asyncIterator in stream) {
    for await (const c of stream as AsyncIterable<Uint8Array | string>)
      yield typeof c === 'string' ? new TextEncoder().encode(c) : c;
    return;
  }
  const reader = (stream as ReadableStream<Uint8Array>).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    yield value;
  }
}

/** A file-backed Blob (Node.js 19.8+): the bytes are read as they are sent. The SDK stays free of Node types. */
async function openAsBlob(path: string, type?: string): Promise<Blob> {
  const specifier = 'node:fs';
  const fs = (await import(specifier)) as { openAsBlob?: (p: string, o?: { type?: string }) => Promise<Blob> };
  if (!fs.openAsBlob) throw new TypeError('Uploading from a path needs Node.js 19.8 or later; pass a Blob or a stream');
  return fs.openAsBlob(path, type ? { type } : undefined);
}

/** The request body of an upload: a FormData for paths and Blobs (file-backed for paths), a stream otherwise. */
export async function encodeUpload(input: UploadInput<Record<string, unknown>> | FormData): Promise<EncodedUpload> {
  if (typeof FormData !== 'undefined' && input instanceof FormData)
    return { body: input, replayable: true, streamed: false };
  const { file, filename, contentType, ...fields } = input as UploadInput<Record<string, unknown>>;
  const textFields = Object.entries(fields).filter(([, v]) => v !== undefined && v !== null);
  if (typeof file === 'string' || isBlob(file)) {
    let blob: Blob;
    let name = filename;
    if (typeof file === 'string') {
      blob = await openAsBlob(file, contentType);
      name ??= baseName(file);
    } else {
      blob = contentType ? new Blob([file], { type: contentType }) : file;
      name ??= (file as Blob & { name?: string }).name ?? 'file';
    }
    const form = new FormData();
    // The text fields first: the server reads them before the file part.
    for (const [k, v] of textFields) form.append(k, String(v));
    form.append('file', blob, name);
    return { body: form, replayable: true, streamed: false };
  }
  const boundary = `----fleet-sdk-${Math.random().toString(16).slice(2)}${Date.now().toString(16)}`;
  const enc = new TextEncoder();
  let head = '';
  for (const [k, v] of textFields)
    head += `--${boundary}\r\nContent-Disposition: form-data; name="${quote(k)}"\r\n\r\n${String(v)}\r\n`;
  head +=
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${quote(filename ?? 'file')}"\r\n` +
    `Content-Type: ${contentType ?? 'application/octet-stream'}\r\n\r\n`;
  const tail = `\r\n--${boundary}--\r\n`;
  const source = chunks(file)[Symbol.asyncIterator]();
  let stage = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (stage === 0) {
        stage = 1;
        return controller.enqueue(enc.encode(head));
      }
      if (stage === 1) {
        const next = await source.next();
        if (!next.done) return controller.enqueue(next.value);
        stage = 2;
        controller.enqueue(enc.encode(tail));
        return controller.close();
      }
    },
    async cancel(reason) {
      await source.return?.(reason);
    },
  });
  return { body, contentType: `multipart/form-data; boundary=${boundary}`, replayable: false, streamed: true };
}
