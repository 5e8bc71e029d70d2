// The data of bench/costs.ts, bulk-loaded with generate_series: the report's fleet over two years, and a large
// meterless fleet for the CSV's streaming rate.
import pg from 'pg';
import { log } from './env.ts';

export interface CostFleet {
  assets: number;
  logs: number;
  fills: number;
  lines: number;
  days: number;
}

const asset = (g: string) => `'ca-' || lpad((${g})::text, 5, '0')`;

async function withClient(url: string, fn: (c: pg.Client) => Promise<void>) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query('SET synchronous_commit = off');
    await fn(c);
  } finally {
    await c.end();
  }
}

/**
 * `assets` over `days`: meter logs (one in ten with the seed's fuel fields), fuel entries each with its reading
 * recorded as the API records it (a meter log of source fuel without fuel fields, linked by logId; 10% partial,
 * 1% void), part and labour lines on work orders, repairs (half on work orders with lines) and expenses.
 */
export async function seedCostFleet(url: string, orgId: string, userId: string, f: CostFleet): Promise<void> {
  const { assets, logs, fills, lines, days } = f;
  await withClient(url, async (c) => {
    const q = (sql: string) => c.query(sql, [orgId]);
    await q(`INSERT INTO yards (id, "orgId", name) SELECT 'cy-' || g, $1, 'Yard ' || g FROM generate_series(1, 20) g`);
    await q(
      `INSERT INTO projects (id, "orgId", name) SELECT 'cp-' || g, $1, 'Job ' || g FROM generate_series(1, 200) g`,
    );
    await q(
      `INSERT INTO parts (id, "orgId", number, name) SELECT 'cpt-' || g, $1, 'P' || g, 'Part ' || g FROM generate_series(1, 100) g`,
    );
    // Even assets are trucks (odometer, miles), odd ones machines (hours); all bought three years ago.
    await q(
      `INSERT INTO assets (id, "orgId", nickname, "assetClass", "meterType", "meterUnit", "yardId", "purchaseCost",
         "purchaseDate", "usefulLifeYears", "depreciationMethod", "salvageValue", "createdAt")
       SELECT ${asset('g')}, $1, 'Unit ' || g, CASE WHEN g % 2 = 0 THEN 'on-road' ELSE 'off-road' END::"AssetClass",
         CASE WHEN g % 2 = 0 THEN 'ODOMETER' ELSE 'HOURS' END::"MeterType", CASE WHEN g % 2 = 0 THEN 'mi' ELSE 'hrs' END,
         'cy-' || (g % 20 + 1), 50000 + g, now() - interval '3 years', 7,
         CASE WHEN g % 3 = 0 THEN 'DECLINING_BALANCE' ELSE 'STRAIGHT_LINE' END::"DepreciationMethod", 5000, now() - interval '3 years'
       FROM generate_series(1, ${assets}) g`,
    );
    const perAsset = Math.floor(logs / assets);
    log(`meter logs: ${logs}`);
    // Log k of an asset is k steps into the two years; its reading grows 5 units a step; one in ten carries fuel.
    await q(
      `INSERT INTO meter_logs (id, "orgId", "assetId", "projectId", "hoursReading", delta, "fuelVolume", "fuelUnit",
         "fuelCostTotal", "loggedAt", source)
       SELECT 'cl-' || g, $1, ${asset(`g % ${assets} + 1`)}, CASE WHEN g % 7 = 0 THEN 'cp-' || (g % 200 + 1) END,
         (g / ${assets}) * 5.0, 5, CASE WHEN g % 10 = 0 THEN 40 END, CASE WHEN g % 10 = 0 THEN 'LITER' END,
         CASE WHEN g % 10 = 0 THEN 61.7 END,
         now() - interval '${days} days' + (g / ${assets}) * interval '${(days * 86400) / perAsset} seconds', 'api'
       FROM generate_series(0, ${logs - 1}) g`,
    );
    log(`fuel entries: ${fills}, each with its reading's meter log`);
    const perAssetFills = Math.floor(fills / assets);
    const fueledAt = `now() - interval '${days} days' + (g / ${assets}) * interval '${(days * 86400) / perAssetFills} seconds' + interval '1 minute'`;
    await q(
      `INSERT INTO meter_logs (id, "orgId", "assetId", "hoursReading", delta, "loggedAt", source, "sourceId")
       SELECT 'cfl-' || g, $1, ${asset(`g % ${assets} + 1`)}, (g / ${assets}) * 50.0 + 1, 1, ${fueledAt}, 'fuel', 'cf-' || g
       FROM generate_series(0, ${fills - 1}) g`,
    );
    await q(
      `INSERT INTO fuel_entries (id, "orgId", "assetId", "fueledAt", volume, unit, "volumeLiters", "totalCost",
         "pricePerUnit", "meterReading", "logId", void, partial, "projectId")
       SELECT 'cf-' || g, $1, ${asset(`g % ${assets} + 1`)}, ${fueledAt},
         20, 'GALLON', 75.70823568, 77.98, 3.899, (g / ${assets}) * 50.0 + 1, 'cfl-' || g, g % 100 = 0, g % 10 = 3,
         CASE WHEN g % 5 = 0 THEN 'cp-' || (g % 200 + 1) END
       FROM generate_series(0, ${fills - 1}) g`,
    );
    const orders = lines / 5;
    log(`work orders ${orders}, lines ${lines}, repairs and expenses`);
    await c.query(
      `INSERT INTO work_orders (id, "orgId", number, "assetId", "projectId", title, "createdById", "createdAt")
       SELECT 'cw-' || g, $1, g, ${asset(`g % ${assets} + 1`)}, CASE WHEN g % 3 = 0 THEN 'cp-' || (g % 200 + 1) END,
         'Service', $2, now() - (g % ${days}) * interval '1 day'
       FROM generate_series(1, ${orders}) g`,
      [orgId, userId],
    );
    await q(
      `INSERT INTO work_order_part_lines (id, "orgId", "workOrderId", "partId", quantity, "unitCost", "totalCost", tracked, "createdAt")
       SELECT 'cpl-' || g, $1, 'cw-' || (g % ${orders} + 1), 'cpt-' || (g % 100 + 1), 2, 12.5, 25, true,
         now() - (g % ${days}) * interval '1 day'
       FROM generate_series(1, ${lines / 2}) g`,
    );
    await q(
      `INSERT INTO work_order_labor_lines (id, "orgId", "workOrderId", hours, rate, "totalCost", "createdAt")
       SELECT 'cll-' || g, $1, 'cw-' || (g % ${orders} + 1), 1.5, 90, 135, now() - (g % ${days}) * interval '1 day'
       FROM generate_series(1, ${lines / 2}) g`,
    );
    // Half the repairs are on work orders (with lines: not counted again), half stand alone.
    await q(
      `INSERT INTO repairs (id, "orgId", "assetId", "workOrderId", cost, "createdAt")
       SELECT 'cr-' || g, $1, ${asset(`g % ${assets} + 1`)}, CASE WHEN g % 2 = 0 THEN 'cw-' || (g % ${orders} + 1) END,
         180.1, now() - (g % ${days}) * interval '1 day'
       FROM generate_series(1, 20000) g`,
    );
    await q(
      `INSERT INTO expenses (id, "orgId", "assetId", type, amount, "incurredAt")
       SELECT 'ce-' || g, $1, ${asset(`g % ${assets} + 1`)}, 'tolls', 12.4, now() - (g % ${days}) * interval '1 day'
       FROM generate_series(1, 20000) g`,
    );
  });
}

/** `count` meterless trailers bought last year, each with a fill and an expense in the last 30 days. */
export async function seedCsvFleet(url: string, orgId: string, count: number): Promise<void> {
  await withClient(url, async (c) => {
    const q = (sql: string) => c.query(sql, [orgId]);
    log(`CSV fleet: ${count} trailers, a fill and an expense each`);
    await q(
      `INSERT INTO assets (id, "orgId", nickname, "assetClass", "meterType", "meterUnit", "purchaseCost", "purchaseDate",
         "usefulLifeYears", "depreciationMethod", "createdAt")
       SELECT 'xa-' || g, $1, 'Trailer ' || g, 'trailer', 'NONE', 'none', 20000 + g, now() - interval '1 year', 10,
         'STRAIGHT_LINE', now() - interval '1 year'
       FROM generate_series(1, ${count}) g`,
    );
    await q(
      `INSERT INTO fuel_entries (id, "orgId", "assetId", "fueledAt", volume, unit, "volumeLiters", "totalCost", "pricePerUnit")
       SELECT 'xf-' || g, $1, 'xa-' || g, now() - (g % 30) * interval '1 day', 10, 'LITER', 10, 15.9, 1.59
       FROM generate_series(1, ${count}) g`,
    );
    await q(
      `INSERT INTO expenses (id, "orgId", "assetId", type, amount, "incurredAt")
       SELECT 'xe-' || g, $1, 'xa-' || g, 'registration', 120.5, now() - (g % 30) * interval '1 day'
       FROM generate_series(1, ${count}) g`,
    );
  });
}
