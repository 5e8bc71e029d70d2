import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../../src/cli/admin.ts';
import { loadConfig } from '../../src/config.ts';
import { migrate, readMigrations } from '../../src/db/migrator.ts';
import { createUnmigratedDatabase, type TestDatabase } from '../helpers/db/test-database.ts';

/** `admin partitions convert` on an installation that held rows when it upgraded (the steps: partition-conversion). */
let db: TestDatabase;
const config = loadConfig({ PUBLIC_BASE_URL: 'http://localhost:3000' });
beforeAll(async () => {
  db = await createUnmigratedDatabase();
  await migrate(
    db.sql,
    readMigrations().filter((m) => m.name < '20261129150000_monthly_partitions'),
  );
  await db.sql.exec(
    `INSERT INTO organizations (id, name, slug) VALUES ('org-a', 'A', 'a');
     INSERT INTO events (id, "orgId", type, data) VALUES ('evt-a', 'org-a', 'asset.created', '{}')`,
  );
  await migrate(db.sql);
});
afterAll(() => db.close());

async function admin(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdminCommand(db, config, argv, { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('admin partitions convert', () => {
  it('converts the tables still waiting, reports its steps on stderr, and is a no-op once done', async () => {
    const first = await admin('partitions', 'convert', '--json');
    expect(first.code).toBe(0);
    // The empty meter logs were partitioned by the migration already; the tables with rows are converted now.
    expect(JSON.parse(first.out)).toEqual({ converted: ['events', 'webhook_deliveries'], pending: [] });
    expect(first.err).toContain('events: swap');
    const again = await admin('partitions', 'convert', '--json');
    expect(JSON.parse(again.out)).toEqual({ converted: [], pending: [] });
    expect(await db.sql.query(`SELECT id FROM events WHERE id = 'evt-a'`)).toEqual([{ id: 'evt-a' }]);
  });
});
