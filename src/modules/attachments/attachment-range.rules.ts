// Conditional and partial GETs of stored bytes (RFC 9110): a strong ETag and one byte range at most.

/** True when If-None-Match names the strong tag (a weak W/ form counts: the comparison is weak for GET). */
export function etagMatches(header: string | undefined, opaque: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === `"${opaque}"`);
}

/**
 * The single range of a Range header over `size` bytes: null to send the whole file (no header, another unit,
 * a malformed or multi-range header, which a server may ignore), 'unsatisfiable' for a well-formed range that
 * starts past the end (416).
 */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | null | 'unsatisfiable' {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (m[2] !== '' && Number(m[2]) < start) return null;
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}
