import type { RequestContext } from '../../core/context.ts';
import { notFound, ValidationError } from '../../core/errors.ts';
import { dec, toWire, toWireOrNull, ZERO, type Dec } from '../../core/money.ts';
import { decodeCursor, encodeCursor } from '../../core/pagination.ts';
import { orgCurrency } from '../organization/organization.repository.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import { bookValueAt, depreciationOf } from './cost-depreciation.rules.ts';
import { costCsvStream } from './cost-csv.adapter.ts';
import {
  costPerMeterUnit,
  economyOf,
  groupFigures,
  MONEY_FIGURES,
  totalOf,
  type Figures,
} from './cost-report.rules.ts';
import type { CostAssetRow, GroupBy } from './cost-rows.schemas.ts';
import {
  costAssets,
  economySegments,
  expenseCosts,
  fuelEntryCosts,
  lineCosts,
  meterLogFuelCosts,
  meterReadings,
  projectNames,
  repairCosts,
  type Period,
} from './costs.repository.ts';
import { checkPeriod, type CostReportInput } from './costs.schemas.ts';

const YEAR_MS = 365 * 86_400_000;
const NO_GROUP: Record<string, string> = { project: '(no project)', yard: '(no yard)' };

/** The wire figures of a group: money to the cent, meters, cost per meter unit, volume and economy. */
function wireFigures(f: Figures) {
  const total = totalOf(f);
  return {
    fuel: toWire(f.money.fuel),
    parts: toWire(f.money.parts),
    labor: toWire(f.money.labor),
    repairs: toWire(f.money.repairs),
    expenses: toWire(f.money.expenses),
    depreciation: toWire(f.money.depreciation),
    total: toWire(total),
    meterStart: f.meter.start,
    meterEnd: f.meter.end,
    meterDelta: f.meter.delta,
    meterUnit: f.meter.unit,
    costPerMeterUnit: costPerMeterUnit(total, f.meter.delta),
    fuelVolumeLiters: toWire(f.liters),
    fuelEconomy: economyOf(f),
  };
}

interface Row {
  key: string | null;
  total: Dec;
  figures: Figures;
}

/** total descending, then key ascending with the no-group row last: a total order for the keyset cursor. */
const compareRows = (a: Pick<Row, 'key' | 'total'>, b: Pick<Row, 'key' | 'total'>) =>
  b.total.comparedTo(a.total) ||
  (a.key === b.key ? 0 : a.key === null ? 1 : b.key === null ? -1 : a.key < b.key ? -1 : 1);

function afterCursor(cursor: string | undefined): Pick<Row, 'key' | 'total'> | null {
  const values = decodeCursor(cursor, 2);
  if (!values) return null;
  const [total, key] = values;
  if (typeof total !== 'string' || (key !== null && typeof key !== 'string') || !/^-?\d+(\.\d+)?$/.test(total))
    throw new ValidationError({ cursor: 'is not a cursor returned by this endpoint' });
  return { total: dec(total), key };
}

export function createCostService({ db }: Pick<ServiceDeps, 'db'>) {
  async function figures(p: Period, by: GroupBy, always: string[] = []) {
    const sql = db.sql;
    // A project's share of a meter is not known: its rows have no meter or economy figures to read.
    const metered = by !== 'project';
    const [assets, fuelEntries, logFuel, expenses, parts, labor, repairs, meters, economy] = await Promise.all([
      costAssets(sql, p),
      fuelEntryCosts(sql, p),
      meterLogFuelCosts(sql, p),
      expenseCosts(sql, p),
      lineCosts(sql, p, 'part'),
      lineCosts(sql, p, 'labor'),
      repairCosts(sql, p),
      metered ? meterReadings(sql, p) : [],
      metered ? economySegments(sql, p) : [],
    ]);
    const families = { fuelEntries, logFuel, expenses, parts, labor, repairs };
    return { assets, groups: groupFigures(by, assets, families, meters, economy, p, always) };
  }

  async function ownedAsset(ctx: RequestContext, id: string) {
    const asset = await db.prisma.asset.findFirst({ where: { id, orgId: ctx.orgId } });
    if (!asset) throw notFound('Asset');
    return asset;
  }

  /** Every row of the report in order, with its name. */
  async function reportRows(ctx: RequestContext, q: CostReportInput) {
    checkPeriod(q.from, q.to);
    const { assets, groups } = await figures({ orgId: ctx.orgId, from: q.from, to: q.to, assetId: null }, q.groupBy);
    const rows: Row[] = [...groups].map(([key, f]) => ({ key, figures: f, total: totalOf(f) })).sort(compareRows);
    const names = await namesOf(ctx, q.groupBy, assets, rows);
    const wire = (r: Row) => ({
      key: r.key,
      name: r.key === null ? NO_GROUP[q.groupBy] : (names.get(r.key) ?? r.key),
      assetCount: r.figures.assets.size,
      ...wireFigures(r.figures),
    });
    return { rows, wire };
  }

  async function namesOf(ctx: RequestContext, by: GroupBy, assets: CostAssetRow[], rows: Row[]) {
    if (by === 'project')
      return projectNames(
        db.sql,
        ctx.orgId,
        rows.map((r) => r.key).filter((k): k is string => k !== null),
      );
    if (by === 'asset') return new Map(assets.map((a) => [a.id, a.nickname]));
    if (by === 'yard') return new Map(assets.filter((a) => a.yardId).map((a) => [a.yardId!, a.yardName ?? a.yardId!]));
    return new Map<string, string>();
  }

  return {
    async assetCosts(ctx: RequestContext, id: string, query: { from?: Date; to?: Date }) {
      const to = query.to ?? new Date();
      const from = query.from ?? new Date(to.getTime() - YEAR_MS);
      checkPeriod(from, to);
      // In parallel: the figures are the organisation's only (orgId in every statement), so an unknown asset's
      // empty figures are dropped for the 404 and nothing of another tenant is ever read. The asset row comes
      // with them (costAssets, narrowed to the organisation's asset).
      const [currency, { assets, groups }] = await Promise.all([
        orgCurrency(db.prisma, ctx.orgId),
        figures({ orgId: ctx.orgId, from, to, assetId: id }, 'asset', [id]),
      ]);
      const asset = assets.find((a) => a.id === id);
      if (!asset) throw notFound('Asset');
      return {
        ok: true as const,
        assetId: asset.id,
        from: from.toISOString(),
        to: to.toISOString(),
        currency,
        ...wireFigures(groups.get(asset.id)!),
      };
    },

    async report(ctx: RequestContext, q: CostReportInput) {
      const after = afterCursor(q.cursor);
      const { rows, wire } = await reportRows(ctx, q);
      const start = after ? rows.findIndex((r) => compareRows(r, after) > 0) : 0;
      const rest = start < 0 ? [] : rows.slice(start);
      const page = rest.slice(0, q.limit);
      const last = page[page.length - 1];
      const sums = Object.fromEntries(
        MONEY_FIGURES.map((m) => [m, toWire(rows.reduce((s, r) => s.plus(r.figures.money[m]), ZERO))]),
      ) as Record<(typeof MONEY_FIGURES)[number], number>;
      return {
        ok: true as const,
        currency: await orgCurrency(db.prisma, ctx.orgId),
        from: q.from.toISOString(),
        to: q.to.toISOString(),
        groupBy: q.groupBy,
        rows: page.map(wire),
        totals: {
          ...sums,
          total: toWire(rows.reduce((s, r) => s.plus(r.total), ZERO)),
          fuelVolumeLiters: toWire(rows.reduce((s, r) => s.plus(r.figures.liters), ZERO)),
          assetCount: new Set(rows.flatMap((r) => [...r.figures.assets])).size,
        },
        nextCursor: rest.length > q.limit && last ? encodeCursor([last.total.toFixed(2), last.key]) : null,
      };
    },

    async exportCsv(ctx: RequestContext, q: CostReportInput) {
      const { rows, wire } = await reportRows(ctx, q);
      return costCsvStream(rows, wire);
    },

    async depreciation(ctx: RequestContext, id: string) {
      const asset = await ownedAsset(ctx, id);
      const salvage = dec(asset.salvageValue);
      const d = depreciationOf({ ...asset, salvageValue: salvage });
      const money = (v: Dec) => toWire(v);
      return {
        ok: true as const,
        assetId: asset.id,
        currency: await orgCurrency(db.prisma, ctx.orgId),
        method: d.method,
        purchaseCost: asset.purchaseCost,
        purchaseDate: asset.purchaseDate?.toISOString() ?? null,
        usefulLifeYears: asset.usefulLifeYears,
        salvageValue: money(salvage),
        bookValue: toWireOrNull(bookValueAt(d, new Date())),
        schedule: d.schedule.map((y) => ({
          year: y.year,
          start: y.start.toISOString(),
          end: y.end.toISOString(),
          opening: money(y.opening),
          depreciation: money(y.depreciation),
          closing: money(y.closing),
        })),
      };
    },
  };
}

export type CostService = ReturnType<typeof createCostService>;
