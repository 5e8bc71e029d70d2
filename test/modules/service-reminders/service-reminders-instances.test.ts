import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/core/clock.ts';
import { openDatabase, type Database } from '../../../src/db/database.ts';
import { createServiceReminderService } from '../../../src/modules/service-reminders/service-reminders.service.ts';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { onPostgres } from '../../helpers/db/test-database.ts';
import { makeAsset, makeServiceProgram, makeServiceTask } from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';

/**
 * "Never two", across instances: two services on two connection pools of one PostgreSQL database (what two
 * processes are to the database) sweep the same due reminders at once, several times. Each transition's event is
 * written once and each reminder cycle opens one work order: the sweep claims rows with SKIP LOCKED and the
 * transition is a conditional UPDATE, so whichever instance loses finds nothing left to do.
 */
const DAY = 86_400_000;
let t: TestApp;
let acme: TestTenant;
let second: Database | null = null;

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  if (onPostgres) second = await openDatabase({ databaseUrl: t.db.url!, dataDir: 'unused', poolSize: 5 });
});
afterAll(async () => {
  await second?.close();
  await t.close();
});

describe.skipIf(!onPostgres)('service reminders on two instances', () => {
  it('sweeping at once emits each transition once and opens one work order per cycle', async () => {
    const task = await makeServiceTask(t, acme.key);
    const programId = await makeServiceProgram(
      t,
      acme.key,
      [{ serviceTaskId: task, dayInterval: 30, dueSoonDays: 5 }],
      {
        autoWorkOrder: true,
      },
    );
    const assets = await Promise.all(
      Array.from({ length: 30 }, (_, i) => makeAsset(t, acme.key, { nickname: `M${i}` })),
    );
    const applied = await t.api.post(`/api/v1/service-programs/${programId}/assets`, acme.key, { assetIds: assets });
    expect(applied.json().summary.remindersCreated).toBe(30);

    const a = t.deps.services.serviceReminders;
    const b = createServiceReminderService({ db: second!, clock: systemClock });
    for (const days of [27, 31]) {
      const at = new Date(Date.now() + days * DAY);
      await Promise.all([a.sweep(at, 7), b.sweep(at, 7), a.sweep(at, 7), b.sweep(at, 7), a.sweep(at), b.sweep(at)]);
      await Promise.all([a.sweep(at), b.sweep(at)]);
    }
    const events = await t.db.prisma.event.findMany({
      where: { orgId: acme.orgId, type: { in: ['service_reminder.due_soon', 'service_reminder.overdue'] } },
    });
    const perReminder = new Map<string, string[]>();
    for (const e of events) {
      const id = (e.data as { serviceReminderId: string }).serviceReminderId;
      perReminder.set(id, [...(perReminder.get(id) ?? []), e.type].sort());
    }
    expect(perReminder.size).toBe(30);
    for (const types of perReminder.values())
      expect(types).toEqual(['service_reminder.due_soon', 'service_reminder.overdue']);
    const links = await t.db.prisma.workOrderServiceReminder.findMany({ where: { orgId: acme.orgId } });
    expect(links).toHaveLength(30);
    expect(await t.db.prisma.workOrder.count({ where: { orgId: acme.orgId } })).toBe(30);
  });
});
