export const SUBJECT_TYPES = ['asset', 'flag', 'work_order', 'repair', 'tool'] as const;
export type SubjectType = (typeof SUBJECT_TYPES)[number];
export const SUBJECT_TABLES: Record<SubjectType, string> = {
  asset: 'assets',
  flag: 'flags',
  work_order: 'work_orders',
  repair: 'repairs',
  tool: 'tools',
};

// Which content types an attachment may have, decided from what the bytes say (attachment-sniff.adapter.ts),
// never from the filename or the client's header. Pure rules: no I/O.

export const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/webp', 'image/gif', 'image/heic', 'image/heif'] as const;
export const OOXML_TYPES = {
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
} as const;
export const LEGACY_OFFICE_TYPES = {
  doc: 'application/msword',
  xls: 'application/vnd.ms-excel',
  ppt: 'application/vnd.ms-powerpoint',
} as const;

/** Every type the service can recognise and may serve; ATTACHMENT_TYPES picks among these. */
export const KNOWN_TYPES: readonly string[] = [
  ...IMAGE_TYPES,
  'application/pdf',
  'text/plain',
  'text/csv',
  ...Object.values(OOXML_TYPES),
  ...Object.values(LEGACY_OFFICE_TYPES),
];

/** Names of ATTACHMENT_TYPES that are not recognisable types (HTML, SVG, scripts are never among them). */
export function unknownTypes(configured: string[]): string[] {
  return configured.filter((t) => !KNOWN_TYPES.includes(t));
}

export const isImage = (contentType: string) => (IMAGE_TYPES as readonly string[]).includes(contentType);

/** Images sharp's prebuilt libvips decodes; HEIC/HEIF usually need a libvips built with libheif's HEVC decoder. */
export const isThumbnailable = (contentType: string) =>
  ['image/jpeg', 'image/png', 'image/webp', 'image/gif'].includes(contentType);

/** Browsers may show these inline (with ?disposition=inline); anything else is always a download. */
export const mayBeInline = (contentType: string) => isImage(contentType) || contentType === 'application/pdf';

/** The Content-Type header a stored type is served with. */
export const servedType = (contentType: string) =>
  contentType.startsWith('text/') ? `${contentType}; charset=utf-8` : contentType;

const HTML_LIKE =
  /^(?:<!doctype\s+html|<html|<head|<body|<script|<iframe|<svg|<\?xml|<!--|<style|<title|<a\s|<div|<img|<table|<br|<p[\s>]|<h1|<font|<b[\s>])/i;
const MARKUP_ANYWHERE = /<(?:script|svg|html|iframe|object|embed)[\s>/]/i;

/**
 * Why a text head cannot be stored as text, or null: markup a browser would sniff as HTML/SVG/XML (at the start,
 * after whitespace and a BOM, as the WHATWG sniffing does, or a script/svg element anywhere in the head) and
 * interpreter lines. Validity as UTF-8 and the absence of NUL are checked over the whole stream.
 */
export function textRefusal(head: string): string | null {
  const start = head.replace(/^\uFEFF/, '').trimStart();
  if (start.startsWith('#!')) return 'scripts are not accepted';
  if (HTML_LIKE.test(start) || MARKUP_ANYWHERE.test(head)) return 'HTML, SVG and XML documents are not accepted';
  return null;
}

/** A text file is CSV when the client calls it so and its first line has a separator. */
export function textSubtype(head: string, filename: string, declared: string | undefined): 'text/csv' | 'text/plain' {
  const claimsCsv = /\.csv$/i.test(filename) || /^text\/csv\b/i.test(declared ?? '');
  const firstLine = head.split(/\r?\n/, 1)[0] ?? '';
  return claimsCsv && /[,;\t]/.test(firstLine) ? 'text/csv' : 'text/plain';
}

/** Legacy Office files share one container (OLE compound file); its extension names which application's it is. */
export function legacyOfficeType(filename: string): string | null {
  const ext = /\.([a-z]+)$/i.exec(filename)?.[1]?.toLowerCase();
  return ext && ext in LEGACY_OFFICE_TYPES ? LEGACY_OFFICE_TYPES[ext as keyof typeof LEGACY_OFFICE_TYPES] : null;
}

const CONTROL = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g;

/**
 * The filename kept for display and Content-Disposition: the last path segment, control and bidi characters
 * removed, NFC, at most 255 characters (the extension kept), never empty. It never reaches a storage path.
 */
export function cleanFilename(raw: string | undefined): string {
  const base = (raw ?? '').normalize('NFC').split(/[\\/]/).pop() ?? '';
  let name = base.replace(CONTROL, '').trim().replace(/^\.+/, '');
  if (name.length > 255) {
    const ext = /\.[^.]{1,16}$/.exec(name)?.[0] ?? '';
    name = name.slice(0, 255 - ext.length) + ext;
  }
  return name || 'file';
}

export const READ_SCOPES = {
  asset: 'assets:read',
  flag: 'flags:read',
  work_order: 'workorders:read',
  repair: 'workorders:read',
  tool: 'tools:read',
} as const;
export const WRITE_SCOPES = {
  asset: 'assets:write',
  flag: 'flags:write',
  work_order: 'workorders:write',
  repair: 'workorders:write',
  tool: 'tools:write',
} as const;

/** Extensions a text download may keep; any other gets the type's own added. */
const TEXT_EXTENSIONS: Record<string, string[]> = {
  'text/plain': ['txt', 'text', 'log', 'md'],
  'text/csv': ['csv', 'txt'],
};

/**
 * The plain-ASCII `filename=` of a download beside its exact `filename*=UTF-8''` (RFC 6266): accents dropped
 * ("Prüfung" → "Prufung"), anything else outside printable ASCII as `_`.
 */
export function asciiFallback(filename: string): string {
  return filename
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\x20-\x7e]/g, '_');
}

/**
 * The name a download is saved under: the original, except a text file whose extension is not a text one gets
 * `.txt` (or `.csv`) added. Text is checked for markup in its first bytes only, so `evil.html` stored as text saves
 * as `evil.html.txt` and never opens as a page. Binary types keep their name: their bytes are what they are.
 */
export function downloadName(filename: string, contentType: string): string {
  const allowed = TEXT_EXTENSIONS[contentType];
  if (!allowed) return filename;
  const ext = /\.([^.]+)$/.exec(filename)?.[1]?.toLowerCase();
  return ext && allowed.includes(ext) ? filename : `${filename}.${allowed[0]}`;
}
