// The statistics every benchmark reports with: medians of rounds, percentiles of samples, ratios per round.

/** The p-th percentile of xs (nearest rank, clamped to the largest sample). */
export function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

/** The median: the middle sample, or the mean of the two middle ones for an even count. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/**
 * a[i] / b[i] for each round, then their median: both sides of a round ran back to back, so a noisy moment on the
 * shared machine moves both and cancels out of the ratio.
 */
export function roundRatios(a: number[], b: number[]): { median: number; rounds: number[] } {
  const rounds = a.map((x, i) => x / b[i]);
  return { median: median(rounds), rounds };
}

/** Runs fn and returns its wall time in ms. */
export async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

/** A duration for the printed tables. */
export const ms = (x: number) => `${x.toFixed(1)} ms`;
/** A whole number with thousands separators. */
export const int = (x: number) => x.toLocaleString('en-US', { maximumFractionDigits: 0 });
/** A rounded figure for the JSON results (no 17-digit floats). */
export const round = (x: number, digits = 3) => Number(x.toFixed(digits));
