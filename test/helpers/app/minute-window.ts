/**
 * Rate limits count in clock-aligned one-minute windows. A test that must see all its requests in one
 * window calls this first: with less than `marginMs` left in the current minute it waits for the next.
 */
export async function awayFromMinuteBoundary(marginMs = 10_000): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < marginMs) await new Promise((r) => setTimeout(r, left + 50));
}
