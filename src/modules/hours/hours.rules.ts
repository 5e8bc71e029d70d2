/**
 * The pure rules of meter logging: delta, review routing (lower and implausible readings) and the PM
 * service point. hours.repository applies them under the asset row lock.
 */

/** An HOURS meter may run ahead of the wall clock by this much (meter rounding, device clock skew). */
export const HOURS_GRACE = 1;
/** Average speed above which an odometer jump is implausible, and the grace in meter units. */
export const ODOMETER_MAX_SPEED = 100;
export const ODOMETER_GRACE = 5;
const HOUR_MS = 3600 * 1000;

/** Meter arithmetic in floating point leaves noise (100.3 - 100.1); six decimals are plenty for a meter. */
export const roundMeter = (n: number) => Math.round(n * 1e6) / 1e6;

export interface PreviousReading {
  reading: number;
  at: Date;
}

/**
 * Why a reading goes to manager review, or null. Lower readings (needs a note, checked by the caller);
 * HOURS: more hours than wall-clock time since the previous reading plus 1 h; ODOMETER: more than an
 * average of 100 per hour since the previous reading plus 5. Readings logged at or before the previous
 * one's time have zero elapsed time, so only the grace applies.
 */
export function reviewReasonFor(
  meterType: 'HOURS' | 'ODOMETER',
  reading: number,
  previous: PreviousReading | null,
  loggedAt: Date,
  unit: string,
): string | null {
  if (!previous) return null;
  const delta = roundMeter(reading - previous.reading);
  if (delta < 0) return `reading ${reading} is lower than the previous reading ${previous.reading}`;
  const elapsedHours = Math.max(0, (loggedAt.getTime() - previous.at.getTime()) / HOUR_MS);
  const shown = Math.round(elapsedHours * 100) / 100;
  if (meterType === 'HOURS' && delta > elapsedHours + HOURS_GRACE) {
    return `implausible: ${delta} ${unit} logged but only ${shown} h elapsed since the previous reading`;
  }
  if (meterType === 'ODOMETER' && delta > ODOMETER_MAX_SPEED * elapsedHours + ODOMETER_GRACE) {
    return `implausible: ${delta} ${unit} in ${shown} h exceeds an average of ${ODOMETER_MAX_SPEED} ${unit}/h`;
  }
  return null;
}

/**
 * The highest service point at or below the reading (baseline + k x interval, k >= 1), or null when the
 * reading has not reached the next one. A null baseline counts as 0, as on the asset detail.
 */
export function servicePointReached(
  reading: number,
  pmInterval: number | null,
  pmBaselineReading: number | null,
): number | null {
  if (pmInterval == null || pmInterval <= 0) return null;
  const baseline = pmBaselineReading ?? 0;
  const intervals = Math.floor(roundMeter((reading - baseline) / pmInterval));
  return intervals >= 1 ? roundMeter(baseline + intervals * pmInterval) : null;
}
