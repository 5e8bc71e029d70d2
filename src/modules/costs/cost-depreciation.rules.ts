// Depreciation schedules: one row per year of life counted from the purchase date, and the share of any span of
// time, prorated by the days it covers of each year.
import { Dec, dec, round, ZERO } from '../../core/money.ts';

export type DepreciationMethod = 'NONE' | 'STRAIGHT_LINE' | 'DECLINING_BALANCE';

export interface DepreciableAsset {
  depreciationMethod: DepreciationMethod;
  purchaseCost: number | null;
  purchaseDate: Date | null;
  usefulLifeYears: number | null;
  salvageValue: Dec;
}

export interface ScheduleYear {
  year: number;
  start: Date;
  end: Date;
  opening: Dec;
  depreciation: Dec;
  closing: Dec;
}

export interface Depreciation {
  method: DepreciationMethod;
  cost: Dec;
  salvage: Dec;
  schedule: ScheduleYear[];
}

/** The same day and time `years` later, in UTC (29 February moves to 1 March in other years). */
export function addYears(at: Date, years: number): Date {
  const d = new Date(at.getTime());
  d.setUTCFullYear(d.getUTCFullYear() + years);
  return d;
}

/**
 * The schedule, or method NONE (no schedule) when the asset does not depreciate or lacks its cost, date or life.
 * STRAIGHT_LINE: (cost - salvage) / life a year. DECLINING_BALANCE: double declining, 2 / life x opening, or
 * straight line over the years left ((opening - salvage) / years left) once that is larger; never below salvage.
 * Each year's amount is rounded half-up to the cent and the last year closes exactly at salvage. A salvage above
 * the cost leaves nothing to depreciate. With `until`, the schedule stops before the first year starting at or after
 * it (a year's figures never depend on the years after it), which is all a period ending there needs.
 */
export function depreciationOf(a: DepreciableAsset, until?: Date): Depreciation {
  const life = a.usefulLifeYears;
  if (a.depreciationMethod === 'NONE' || a.purchaseCost == null || !a.purchaseDate || !life || life < 1)
    return { method: 'NONE', cost: ZERO, salvage: ZERO, schedule: [] };
  const cost = dec(a.purchaseCost);
  const salvage = Dec.min(a.salvageValue, cost);
  const straightLine = a.depreciationMethod === 'STRAIGHT_LINE' ? round(cost.minus(salvage).div(life)) : null;
  const schedule: ScheduleYear[] = [];
  let opening = cost;
  for (let year = 1; year <= life; year++) {
    const start = addYears(a.purchaseDate, year - 1);
    if (until && start >= until) break;
    let amount: Dec;
    if (year === life) amount = opening.minus(salvage);
    else if (straightLine) amount = straightLine;
    else amount = round(Dec.max(opening.times(2).div(life), opening.minus(salvage).div(life - year + 1)));
    amount = Dec.max(ZERO, Dec.min(amount, opening.minus(salvage)));
    const closing = opening.minus(amount);
    schedule.push({ year, start, end: addYears(a.purchaseDate, year), opening, depreciation: amount, closing });
    opening = closing;
  }
  return { method: a.depreciationMethod, cost, salvage, schedule };
}

const overlapMs = (from: Date, to: Date, y: ScheduleYear) =>
  Math.max(0, Math.min(to.getTime(), y.end.getTime()) - Math.max(from.getTime(), y.start.getTime()));

/** The depreciation falling in [from, to), each year's amount prorated by the share of its days covered; cents. */
export function depreciationBetween(d: Depreciation, from: Date, to: Date): Dec {
  let total = ZERO;
  for (const y of d.schedule) {
    const covered = overlapMs(from, to, y);
    if (covered === 0) continue;
    const length = y.end.getTime() - y.start.getTime();
    total = total.plus(covered === length ? y.depreciation : y.depreciation.times(covered).div(length));
  }
  return round(total);
}

/** The book value at `at`: the cost before the purchase, salvage after the life, prorated within a year; cents. */
export function bookValueAt(d: Depreciation, at: Date): Dec | null {
  if (d.method === 'NONE') return null;
  const first = d.schedule[0];
  if (at <= first.start) return d.cost;
  return round(d.cost.minus(depreciationBetween(d, first.start, at)));
}
