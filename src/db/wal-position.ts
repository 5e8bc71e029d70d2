/** WAL positions (LSNs, `16/B374D848`) as bigints, so that they compare and subtract exactly. */
export function parseLsn(text: string | null | undefined): bigint | null {
  if (!text) return null;
  const m = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text.trim());
  return m ? (BigInt(`0x${m[1]}`) << 32n) + BigInt(`0x${m[2]}`) : null;
}

/** A fixed-width hex text whose string order is the numeric order (what the Redis script compares). */
export function sortableLsn(lsn: bigint): string {
  return lsn.toString(16).padStart(16, '0');
}

export function fromSortable(text: string | null | undefined): bigint {
  return text ? BigInt(`0x${text}`) : 0n;
}
