import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { csvCell } from '../../../src/modules/shared/csv-cell.ts';
import { TOOL_CSV_COLUMNS } from '../../../src/modules/tools/tool-csv.adapter.ts';
import { toolHelpers } from '../../helpers/tools/tool-helpers.ts';

let t: TestApp;
let acme: TestTenant;
const h = toolHelpers(() => ({ t, acme }));
const DAY = 86_400_000;
const names = (res: { json: () => any }) => res.json().tools.map((x: { name: string }) => x.name);
const list = (q: string, key = acme.key) => t.api.get(`/api/v1/tools?${q}`, key);

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
});
afterAll(() => t.close());

describe('GET /tools filters', () => {
  let tenant: TestTenant;
  const get = (q: string) => list(q, tenant.key);
  const create = (body: Record<string, unknown>) => h.createTool(body, tenant.key);

  beforeAll(async () => {
    tenant = await t.tenant('Filters');
    const kit = await create({ name: 'Kit' });
    await create({ name: 'Part A', parentKitId: kit, category: 'Hand' });
    await create({ name: 'Bolts low', isConsumable: true, stockLevel: 5 });
    await create({ name: 'Bolts ok', isConsumable: true, stockLevel: 6 });
    await create({ name: 'Rags custom', isConsumable: true, stockLevel: 10, minStockLevel: 10 });
    await create({ name: 'Rags null stock', isConsumable: true });
    await create({ name: 'Warranty soon', warrantyEndDate: new Date(Date.now() + 10 * DAY).toISOString() });
    await create({ name: 'Warranty later', warrantyEndDate: new Date(Date.now() + 100 * DAY).toISOString() });
    await create({ name: 'Warranty expired', warrantyEndDate: new Date(Date.now() - DAY).toISOString() });
    const retired = await create({ name: 'Retired one' });
    await t.api.patch(`/api/v1/tools/${retired}`, tenant.key, { status: 'RETIRED' });
    const pmDue = await create({ name: 'PM due', pmIntervalDays: 30 });
    const pmServiced = await create({ name: 'PM serviced', pmIntervalDays: 30 });
    await create({ name: 'PM fresh', pmIntervalDays: 30 });
    await t.db.prisma.tool.update({ where: { id: pmDue }, data: { createdAt: new Date(Date.now() - 31 * DAY) } });
    await t.db.prisma.tool.update({
      where: { id: pmServiced },
      data: { createdAt: new Date(Date.now() - 90 * DAY), lastServicedAt: new Date(Date.now() - 5 * DAY) },
    });
  });

  it('defaults to every status but RETIRED, ordered by name; status CSV ignores unknown values', async () => {
    const all = names(await get(''));
    expect(all).not.toContain('Retired one');
    expect(all).toEqual([...all].sort());
    expect(names(await get('status=retired,bogus'))).toEqual(['Retired one']);
    expect(names(await get('status=bogus'))).toEqual(all);
  });

  it('lowStock: consumables with a stock level at or below COALESCE(minStockLevel, 5)', async () => {
    expect(names(await get('lowStock=true'))).toEqual(['Bolts low', 'Rags custom']);
    expect(names(await get('lowStock=false'))).toContain('Bolts ok');
  });

  it('pmOverdue: interval elapsed since the last service, or since creation', async () => {
    expect(names(await get('pmOverdue=true'))).toEqual(['PM due']);
    expect(names(await get('pmOverdue=true&lowStock=true'))).toEqual([]);
  });

  it('warrantyExpiringDays: between now and now + N days; out-of-range values are ignored', async () => {
    expect(names(await get('warrantyExpiringDays=30'))).toEqual(['Warranty soon']);
    expect(names(await get('warrantyExpiringDays=365'))).toEqual(['Warranty later', 'Warranty soon']);
    const everything = names(await get(''));
    for (const q of ['0', '366', 'abc', '-5'])
      expect(names(await get(`warrantyExpiringDays=${q}`))).toEqual(everything);
  });

  it('category, parentKitId and assignment filters', async () => {
    expect(names(await get('category=Hand'))).toEqual(['Part A']);
    const kitId = (await get('')).json().tools.find((x: { name: string }) => x.name === 'Kit').id;
    expect(names(await get(`parentKitId=${kitId}`))).toEqual(['Part A']);
    expect(names(await get(`assignedUserId=${tenant.userId}`))).toEqual([]);
  });

  it('lowStock pages are full: the filter runs in SQL, not after the page is read', async () => {
    const fresh = await t.tenant('LowStockPages');
    await t.api.post(
      '/api/v1/tools/batch',
      fresh.key,
      Array.from({ length: 12 }, (_, i) => ({
        name: `Item ${String(i).padStart(2, '0')}`,
        isConsumable: true,
        stockLevel: i % 2 === 0 ? 1 : 50,
      })),
    );
    const first = await list('lowStock=true&limit=4', fresh.key);
    expect(names(first)).toEqual(['Item 00', 'Item 02', 'Item 04', 'Item 06']);
    const second = await list(`lowStock=true&limit=4&cursor=${first.json().nextCursor}`, fresh.key);
    expect(names(second)).toEqual(['Item 08', 'Item 10']);
    expect(second.json().nextCursor).toBeNull();
  });
});

describe('GET /tools pagination', () => {
  it('walks name order with a (name, id) cursor, duplicates of a name included, rows inserted mid-walk never repeat', async () => {
    const fresh = await t.tenant('Pager');
    const batch = ['delta', 'alpha', 'charlie', 'bravo', 'alpha', 'echo', 'alpha', 'foxtrot', 'golf'].map((name) => ({
      name,
    }));
    await t.api.post('/api/v1/tools/batch', fresh.key, batch);
    const seen: { id: string; name: string }[] = [];
    let cursor: string | null = null;
    do {
      const res = await list(`limit=2${cursor ? `&cursor=${cursor}` : ''}`, fresh.key);
      expect(res.statusCode).toBe(200);
      seen.push(...res.json().tools);
      cursor = res.json().nextCursor;
      await h.createTool({ name: 'aardvark' }, fresh.key);
    } while (cursor);
    expect(new Set(seen.map((s) => s.id)).size).toBe(seen.length);
    expect(seen.map((s) => s.name)).toEqual([
      'alpha',
      'alpha',
      'alpha',
      'bravo',
      'charlie',
      'delta',
      'echo',
      'foxtrot',
      'golf',
    ]);
  });

  it('rejects a foreign cursor with 422 and clamps limit', async () => {
    expect((await list('cursor=garbage')).statusCode).toBe(422);
    expect((await list('limit=abc')).statusCode).toBe(422);
    expect((await list('format=xml')).statusCode).toBe(422);
  });
});

describe('GET /tools?format=csv', () => {
  it('streams every matching row (beyond one page) as RFC 4180 CSV with 22 columns and a dated filename', async () => {
    const fresh = await t.tenant('Csv');
    await t.api.post(
      '/api/v1/tools/batch',
      fresh.key,
      Array.from({ length: 90 }, (_, i) => ({ name: `Bulk ${String(i).padStart(3, '0')}` })),
    );
    await t.api.post(
      '/api/v1/tools/batch',
      fresh.key,
      Array.from({ length: 90 }, (_, i) => ({ name: `More ${String(i).padStart(3, '0')}` })),
    );
    await t.api.post(
      '/api/v1/tools/batch',
      fresh.key,
      Array.from({ length: 50 }, (_, i) => ({ name: `Zed ${String(i).padStart(3, '0')}` })),
    );
    const tricky = await h.createTool(
      {
        name: '=HYPERLINK("http://evil")',
        category: 'Comma, "quoted"\nnewline',
        supplier: '@sum',
        makeModel: '-2+3',
        serial: '+1',
      },
      fresh.key,
    );
    const res = await list('format=csv&limit=5', fresh.key);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    const today = new Date().toISOString().slice(0, 10);
    expect(res.headers['content-disposition']).toBe(`attachment; filename="service-tools-${today}.csv"`);
    const rows: string[][] = parse(res.body);
    const [header, ...data] = rows;
    expect(header).toEqual([
      'id',
      'name',
      'category',
      'makeModel',
      'serial',
      'status',
      'isConsumable',
      'stockLevel',
      'minStockLevel',
      'parentKitId',
      'assignedUserId',
      'assignedVehicleId',
      'assignedYardId',
      'checkedOutToUserId',
      'checkedOutAt',
      'purchaseDate',
      'purchaseCost',
      'supplier',
      'warrantyEndDate',
      'pmIntervalDays',
      'lastServicedAt',
      'createdAt',
    ]);
    expect(data).toHaveLength(231);
    expect(data.every((r) => r.length === 22)).toBe(true);
    const row = data.find((r) => r[0] === tricky)!;
    expect(row[1]).toBe(`'=HYPERLINK("http://evil")`);
    expect(row[2]).toBe('Comma, "quoted"\nnewline');
    expect(row[3]).toBe(`'-2+3`);
    expect(row[4]).toBe(`'+1`);
    expect(row[17]).toBe(`'@sum`);
    expect(row[5]).toBe('GOOD');
    const plain = data.filter((r) => r[0] !== tricky).map((r) => r[1]);
    expect(plain).toEqual([...plain].sort());
  });

  it('writes every cell as csvCell would from the row (the database formats the lines)', async () => {
    const fresh = await t.tenant('CsvParity');
    const ids = [
      await h.createTool(
        {
          name: ' leading space',
          category: 'trailing nbsp\u00a0',
          makeModel: '\ttab formula',
          serial: 'a"b',
          supplier: 'em space\u2003',
          purchaseCost: 1e12,
          purchaseDate: '2026-01-02T03:04:05.006Z',
        },
        fresh.key,
      ),
      await h.createTool(
        {
          name: 'plain',
          category: 'x\r\ny',
          makeModel: '@at',
          serial: '-1',
          supplier: 'ünïcødé, comma',
          purchaseCost: 0.1,
          isConsumable: true,
          stockLevel: 3,
        },
        fresh.key,
      ),
      await h.createTool({ name: 'tiny', purchaseCost: 1.5e-7, pmIntervalDays: 30 }, fresh.key),
    ];
    // The API trims text on input; older or imported rows may still start or end with white space.
    await t.db.sql.query(`UPDATE tools SET name = $2, category = $3, supplier = $4 WHERE id = $1`, [
      ids[0],
      ' leading space',
      'trailing nbsp\u00a0',
      'em space\u2003',
    ]);
    const body = (await list('format=csv', fresh.key)).body;
    const rows = await t.db.sql.query<Record<string, string | number | boolean | Date | null>>(
      `SELECT * FROM tools WHERE id = ANY ($1)`,
      [ids],
    );
    for (const row of rows) {
      const cells = TOOL_CSV_COLUMNS.map(([name]) => {
        const v = row[name];
        return csvCell(v instanceof Date ? v.toISOString() : (v ?? null));
      });
      expect(body).toContain(`\r\n${cells.join(',')}\r\n`);
    }
  });

  it('applies the same filters as JSON', async () => {
    const fresh = await t.tenant('CsvFilters');
    await h.createTool({ name: 'Low', isConsumable: true, stockLevel: 0 }, fresh.key);
    await h.createTool({ name: 'Fine', isConsumable: true, stockLevel: 100 }, fresh.key);
    const rows: string[][] = parse((await list('format=csv&lowStock=true', fresh.key)).body);
    expect(rows.slice(1).map((r) => r[1])).toEqual(['Low']);
    expect(rows[1][6]).toBe('true');
    expect(rows[1][7]).toBe('0');
  });
});
