/**
 * The time the service reasons with where a rule depends on elapsed time in JavaScript (webhook signing and
 * secret overlaps, endpoint health). Injected through the composition root so tests can move it instead of
 * sleeping; the database's own now() still governs queue timing.
 */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
