// The rows the cost statements return and the groupings of the report: shared by the repository and the rules.

export const GROUP_BY = ['asset', 'project', 'yard', 'assetClass'] as const;
export type GroupBy = (typeof GROUP_BY)[number];

/** A sum of one family for one asset and project. */
export interface FamilyRow {
  assetId: string;
  projectId: string | null;
  amount: string;
  liters?: string;
}

export interface MeterRow {
  assetId: string;
  before: number | null;
  first: number | null;
  last: number | null;
}

/** An asset's first and last closing fills of the period, and the litres of its fills outside them. */
export interface EconomyRow {
  assetId: string;
  first: number;
  last: number;
  outside: string;
}

export interface CostAssetRow {
  id: string;
  nickname: string;
  assetClass: string;
  yardId: string | null;
  yardName: string | null;
  meterType: 'HOURS' | 'ODOMETER' | 'NONE';
  meterUnit: string;
  lifecycleStatus: string;
  soldAt: Date | null;
  depreciationMethod: 'NONE' | 'STRAIGHT_LINE' | 'DECLINING_BALANCE';
  purchaseCost: number | null;
  purchaseDate: Date | null;
  usefulLifeYears: number | null;
  salvageValue: string;
}
