// Turning the summed families into figures per asset and per group: pure arithmetic on exact decimals.
import { Dec, dec, round, ZERO } from '../../core/money.ts';
import { depreciationBetween, depreciationOf } from './cost-depreciation.rules.ts';
import type { CostAssetRow, EconomyRow, FamilyRow, GroupBy, MeterRow } from './cost-rows.schemas.ts';

export const MONEY_FIGURES = ['fuel', 'parts', 'labor', 'repairs', 'expenses', 'depreciation'] as const;
type MoneyFigure = (typeof MONEY_FIGURES)[number];

const US_GALLON = new Dec('3.785411784');
const KM_PER_MILE = new Dec('1.609344');

export interface Families {
  fuelEntries: FamilyRow[];
  logFuel: FamilyRow[];
  expenses: FamilyRow[];
  parts: FamilyRow[];
  labor: FamilyRow[];
  repairs: FamilyRow[];
}

export interface Economy {
  litersPerHour?: number;
  kmPerLiter?: number;
  mpgUs?: number;
}

/** One group's (or asset's) figures, money as exact decimals each rounded to the cent. */
export interface Figures {
  money: Record<MoneyFigure, Dec>;
  liters: Dec;
  assets: Set<string>;
  /** Per asset of the group: its meter movement and its complete fuel-economy segments. */
  meter: { start: number | null; end: number | null; delta: number | null; unit: string | null };
  economy: { hours: Dec; hoursLiters: Dec; km: Dec; miles: Dec; roadLiters: Dec };
}

const emptyFigures = (): Figures => ({
  money: { fuel: ZERO, parts: ZERO, labor: ZERO, repairs: ZERO, expenses: ZERO, depreciation: ZERO },
  liters: ZERO,
  assets: new Set(),
  meter: { start: null, end: null, delta: null, unit: null },
  economy: { hours: ZERO, hoursLiters: ZERO, km: ZERO, miles: ZERO, roadLiters: ZERO },
});

export const totalOf = (f: Figures): Dec => Object.values(f.money).reduce((a, b) => a.plus(b), ZERO);

/** The depreciation of [from, to), stopping at the sale of a SOLD asset. */
export function periodDepreciation(a: CostAssetRow, from: Date, to: Date): Dec {
  const end = a.lifecycleStatus === 'SOLD' && a.soldAt && a.soldAt < to ? a.soldAt : to;
  if (end <= from) return ZERO;
  const d = depreciationOf({ ...a, salvageValue: dec(a.salvageValue) }, end);
  return d.method === 'NONE' ? ZERO : depreciationBetween(d, from, end);
}

/** Meter movement of one asset: start at or before `from` (else the first in the period), end before `to`. */
export function meterOf(a: CostAssetRow, m: MeterRow | undefined): Figures['meter'] {
  if (a.meterType === 'NONE' || !m) return { start: null, end: null, delta: null, unit: null };
  const start = m.before ?? m.first;
  const end = m.last;
  if (start === null || end === null) return { start: null, end: null, delta: null, unit: a.meterUnit };
  return { start, end, delta: Math.round((end - start) * 1e6) / 1e6, unit: a.meterUnit };
}

/** The group a cost of `asset` tagged with `projectId` lands in (null: no project, no yard). */
function groupKey(by: GroupBy, a: CostAssetRow, projectId: string | null): string | null {
  if (by === 'asset') return a.id;
  if (by === 'project') return projectId;
  if (by === 'yard') return a.yardId;
  return a.assetClass;
}

/**
 * Every figure of the period into its group. Each cost row of a family lands in exactly one group, depreciation
 * in the asset's (by project: the no-project group), so the groups' sums are the fleet's whatever the grouping.
 */
export function groupFigures(
  by: GroupBy,
  assets: CostAssetRow[],
  families: Families,
  meters: MeterRow[],
  economy: EconomyRow[],
  period: { from: Date; to: Date },
  /** Groups to give figures even without any cost (an asset's own /costs). */
  always: string[] = [],
): Map<string | null, Figures> {
  const byId = new Map(assets.map((a) => [a.id, a]));
  const groups = new Map<string | null, Figures>();
  const touch = (key: string | null) => {
    let g = groups.get(key);
    if (!g) groups.set(key, (g = emptyFigures()));
    return g;
  };
  for (const key of always) if (byId.has(key)) touch(key).assets.add(key);
  const add = (rows: FamilyRow[], figure: MoneyFigure, withLiters = false) => {
    for (const r of rows) {
      const a = byId.get(r.assetId);
      if (!a) continue;
      const g = touch(groupKey(by, a, r.projectId));
      g.money[figure] = g.money[figure].plus(dec(r.amount));
      if (withLiters && r.liters) g.liters = g.liters.plus(dec(r.liters));
      g.assets.add(a.id);
    }
  };
  add(families.fuelEntries, 'fuel', true);
  add(families.logFuel, 'fuel', true);
  add(families.expenses, 'expenses');
  add(families.parts, 'parts');
  add(families.labor, 'labor');
  add(families.repairs, 'repairs');
  for (const a of assets) {
    const amount = periodDepreciation(a, period.from, period.to);
    if (amount.isZero()) continue;
    const g = touch(groupKey(by, a, null));
    g.money.depreciation = g.money.depreciation.plus(amount);
    g.assets.add(a.id);
  }
  if (by !== 'project') addMeters(by, groups, byId, meters, economy, litersByAsset(families));
  return groups;
}

/** Each asset's litres of the period: every fill of both fuel families, whatever its project. */
function litersByAsset(families: Families): Map<string, Dec> {
  const liters = new Map<string, Dec>();
  for (const r of [...families.fuelEntries, ...families.logFuel])
    if (r.liters) liters.set(r.assetId, (liters.get(r.assetId) ?? ZERO).plus(dec(r.liters)));
  return liters;
}

/** Meter movement and economy segments of each group's assets (a project's share of a meter is not known). */
function addMeters(
  by: GroupBy,
  groups: Map<string | null, Figures>,
  byId: Map<string, CostAssetRow>,
  meters: MeterRow[],
  economy: EconomyRow[],
  assetLiters: Map<string, Dec>,
) {
  const meterById = new Map(meters.map((m) => [m.assetId, m]));
  const economyById = new Map(economy.map((e) => [e.assetId, e]));
  for (const g of groups.values()) {
    let delta: number | null = 0;
    let unit: string | null = null;
    for (const id of g.assets) {
      const a = byId.get(id)!;
      const m = meterOf(a, meterById.get(id));
      if (by === 'asset') g.meter = m;
      if (m.delta === null || (unit !== null && unit !== m.unit)) delta = null;
      else if (delta !== null) delta = Math.round((delta + m.delta) * 1e6) / 1e6;
      unit ??= m.unit;
      const e = economyById.get(id);
      if (!e) continue;
      const distance = dec(e.last).minus(dec(e.first));
      // The complete segments' volume: the period's fills but those up to the first closing one and after the last.
      const liters = (assetLiters.get(id) ?? ZERO).minus(dec(e.outside));
      if (a.meterType === 'HOURS') {
        g.economy.hours = g.economy.hours.plus(distance);
        g.economy.hoursLiters = g.economy.hoursLiters.plus(liters);
      } else {
        const km = a.meterUnit === 'km' ? distance : distance.times(KM_PER_MILE);
        g.economy.km = g.economy.km.plus(km);
        g.economy.miles = g.economy.miles.plus(km.div(KM_PER_MILE));
        g.economy.roadLiters = g.economy.roadLiters.plus(liters);
      }
    }
    if (by !== 'asset')
      g.meter = { start: null, end: null, delta: g.assets.size > 0 ? delta : null, unit: delta === null ? null : unit };
  }
}

/** litersPerHour for HOURS meters, kmPerLiter and mpgUs for odometers, from complete segments only; 2 decimals. */
export function economyOf(f: Figures): Economy | null {
  const out: Economy = {};
  const e = f.economy;
  if (e.hours.gt(0) && e.hoursLiters.gt(0)) out.litersPerHour = round(e.hoursLiters.div(e.hours)).toNumber();
  if (e.km.gt(0) && e.roadLiters.gt(0)) {
    out.kmPerLiter = round(e.km.div(e.roadLiters)).toNumber();
    out.mpgUs = round(e.miles.div(e.roadLiters.div(US_GALLON))).toNumber();
  }
  return Object.keys(out).length > 0 ? out : null;
}

/** Total over the meter's movement, 2 decimals; null when the meter did not move (or went back). */
export function costPerMeterUnit(total: Dec, delta: number | null): number | null {
  return delta !== null && delta > 0 ? round(total.div(dec(delta))).toNumber() : null;
}
