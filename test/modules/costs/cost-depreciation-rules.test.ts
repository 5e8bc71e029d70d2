import { describe, expect, it } from 'vitest';
import { dec } from '../../../src/core/money.ts';
import {
  bookValueAt,
  depreciationBetween,
  depreciationOf,
  type DepreciableAsset,
} from '../../../src/modules/costs/cost-depreciation.rules.ts';

const asset = (over: Partial<DepreciableAsset>): DepreciableAsset => ({
  depreciationMethod: 'STRAIGHT_LINE',
  purchaseCost: 10000,
  purchaseDate: new Date('2024-01-01T00:00:00Z'),
  usefulLifeYears: 5,
  salvageValue: dec(1000),
  ...over,
});
const rows = (a: DepreciableAsset) =>
  depreciationOf(a).schedule.map((y) => [
    y.year,
    y.opening.toNumber(),
    y.depreciation.toNumber(),
    y.closing.toNumber(),
  ]);

describe('depreciation schedules (hand-computed)', () => {
  it('straight line: (10,000 - 1,000) / 5 = 1,800 a year, closing at salvage', () => {
    expect(rows(asset({}))).toEqual([
      [1, 10000, 1800, 8200],
      [2, 8200, 1800, 6400],
      [3, 6400, 1800, 4600],
      [4, 4600, 1800, 2800],
      [5, 2800, 1800, 1000],
    ]);
    const first = depreciationOf(asset({})).schedule[0];
    expect(first.start.toISOString()).toBe('2024-01-01T00:00:00.000Z');
    expect(first.end.toISOString()).toBe('2025-01-01T00:00:00.000Z');
  });

  it('straight line with cents: 1,000 over 3 years is 333.33, 333.33 and 333.34', () => {
    expect(rows(asset({ purchaseCost: 1000, salvageValue: dec(0), usefulLifeYears: 3 }))).toEqual([
      [1, 1000, 333.33, 666.67],
      [2, 666.67, 333.33, 333.34],
      [3, 333.34, 333.34, 0],
    ]);
  });

  it('double declining: 40% a year, straight line once larger, never below salvage', () => {
    // 10,000 x 0.4 = 4,000; 6,000 x 0.4 = 2,400; 3,600 x 0.4 = 1,440 (SL 866.67); 2,160 x 0.4 = 864 (SL 580);
    // last year 1,296 - 1,000 = 296.
    expect(rows(asset({ depreciationMethod: 'DECLINING_BALANCE' }))).toEqual([
      [1, 10000, 4000, 6000],
      [2, 6000, 2400, 3600],
      [3, 3600, 1440, 2160],
      [4, 2160, 864, 1296],
      [5, 1296, 296, 1000],
    ]);
  });

  it('double declining switches to straight line when that is larger', () => {
    // Cost 10,000, no salvage, 5 years: 4,000; 2,400; 1,440; then SL (2,160 / 2 = 1,080) beats 864: 1,080, 1,080.
    expect(rows(asset({ depreciationMethod: 'DECLINING_BALANCE', salvageValue: dec(0) }))).toEqual([
      [1, 10000, 4000, 6000],
      [2, 6000, 2400, 3600],
      [3, 3600, 1440, 2160],
      [4, 2160, 1080, 1080],
      [5, 1080, 1080, 0],
    ]);
  });

  it('double declining stops at a high salvage', () => {
    // 10,000 with salvage 5,000 over 4 years: 5,000 x ... 10,000 x 0.5 = 5,000 reaches salvage in year 1.
    expect(
      rows(asset({ depreciationMethod: 'DECLINING_BALANCE', salvageValue: dec(5000), usefulLifeYears: 4 })),
    ).toEqual([
      [1, 10000, 5000, 5000],
      [2, 5000, 0, 5000],
      [3, 5000, 0, 5000],
      [4, 5000, 0, 5000],
    ]);
  });

  it('is NONE without a cost, a date, a life, or with method NONE', () => {
    for (const over of [
      { purchaseCost: null },
      { purchaseDate: null },
      { usefulLifeYears: null },
      { depreciationMethod: 'NONE' as const },
    ]) {
      expect(depreciationOf(asset(over))).toMatchObject({ method: 'NONE', schedule: [] });
    }
  });

  it('prorates a period by days: half of 2024 (leap year, 366 days) is 183/366 of 1,800', () => {
    const d = depreciationOf(asset({}));
    expect(depreciationBetween(d, new Date('2024-01-01Z'), new Date('2024-07-02Z')).toNumber()).toBe(900);
    // 2024-12-01 .. 2025-02-01: 31/366 x 1,800 + 31/365 x 1,800 = 152.459... + 152.876... = 305.34
    expect(depreciationBetween(d, new Date('2024-12-01Z'), new Date('2025-02-01Z')).toNumber()).toBe(305.34);
    // Before the purchase and after the life: nothing.
    expect(depreciationBetween(d, new Date('2020-01-01Z'), new Date('2024-01-01Z')).toNumber()).toBe(0);
    expect(depreciationBetween(d, new Date('2029-01-01Z'), new Date('2031-01-01Z')).toNumber()).toBe(0);
    expect(depreciationBetween(d, new Date('2000-01-01Z'), new Date('2040-01-01Z')).toNumber()).toBe(9000);
  });

  it('gives the book value on a day: cost before purchase, prorated within a year, salvage after the life', () => {
    const d = depreciationOf(asset({ depreciationMethod: 'DECLINING_BALANCE' }));
    expect(bookValueAt(d, new Date('2023-06-01Z'))!.toNumber()).toBe(10000);
    // 2025-07-02 is 182 days into year 2 (365 days): 6,000 - 2,400 x 182/365 = 4,803.29
    expect(bookValueAt(d, new Date('2025-07-02Z'))!.toNumber()).toBe(4803.29);
    expect(bookValueAt(d, new Date('2030-01-01Z'))!.toNumber()).toBe(1000);
    expect(bookValueAt(depreciationOf(asset({ depreciationMethod: 'NONE' })), new Date())).toBeNull();
  });

  it('builds only the years a period ending at `until` needs, with the same figures', () => {
    for (const depreciationMethod of ['STRAIGHT_LINE', 'DECLINING_BALANCE'] as const) {
      const a = asset({ depreciationMethod, usefulLifeYears: 7 });
      const full = depreciationOf(a);
      const until = new Date('2026-03-01Z');
      const cut = depreciationOf(a, until);
      expect(cut.schedule).toEqual(full.schedule.slice(0, 3));
      const from = new Date('2025-02-01Z');
      expect(depreciationBetween(cut, from, until)).toEqual(depreciationBetween(full, from, until));
      expect(depreciationOf(a, new Date('2024-01-01Z')).schedule).toEqual([]);
    }
  });
});
