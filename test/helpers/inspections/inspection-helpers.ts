// Shorthands shared by the inspections test files: forms, submissions and the events they record.
import { expectCreated } from '../app/factories.ts';
import type { TestApp } from '../app/test-app.ts';

type Body = Record<string, unknown>;
type WithApi = Pick<TestApp, 'api'>;

/** A form of 40 pass_fail items (item_1 … item_40; the first five critical) plus an hour meter item. */
export function bigFormBody(name = 'Walk-around 40'): Body {
  return {
    name,
    items: [
      ...Array.from({ length: 40 }, (_, i) => ({
        key: `item_${i + 1}`,
        label: `Item ${i + 1}`,
        type: 'pass_fail',
        critical: i < 5,
      })),
      { key: 'hours', label: 'Hour meter', type: 'meter', required: false },
    ],
  };
}

/** A small form: brakes (critical, photo on fail), lights, tyre pressure 30..40, a note, an hour meter. */
export function smallFormBody(overrides: Body = {}): Body {
  return {
    name: 'Daily check',
    items: [
      { key: 'brakes', label: 'Brakes', type: 'pass_fail', critical: true, photoRequiredOnFail: false },
      { key: 'lights', label: 'Lights', type: 'pass_fail' },
      { key: 'tyre_psi', label: 'Tyre pressure', type: 'number', min: 30, max: 40 },
      { key: 'remarks', label: 'Remarks', type: 'text', required: false },
      { key: 'hours', label: 'Hour meter', type: 'meter', required: false },
      { key: 'photo', label: 'Photo', type: 'photo', required: false },
    ],
    ...overrides,
  };
}

export async function makeForm(t: WithApi, key: string, body: Body = smallFormBody()): Promise<string> {
  const res = await t.api.post('/api/v1/inspection-forms', key, body);
  return expectCreated<{ inspectionFormId: string }>(res, 'POST /inspection-forms').inspectionFormId;
}

/** Answers for smallFormBody: everything passes unless `overrides` (by item key) say otherwise. */
export function answers(overrides: Record<string, Body | null> = {}): Body[] {
  const base: Record<string, Body> = {
    brakes: { itemKey: 'brakes', pass: true },
    lights: { itemKey: 'lights', pass: true },
    tyre_psi: { itemKey: 'tyre_psi', value: 35 },
  };
  for (const [k, v] of Object.entries(overrides)) {
    if (v === null) delete base[k];
    else base[k] = { itemKey: k, ...v };
  }
  return Object.values(base);
}

export function submit(t: WithApi, key: string, body: Body, headers?: Record<string, string>) {
  return t.api.post('/api/v1/inspections', key, body, headers);
}

/** The events of a type recorded for the organisation, oldest first. */
export async function eventsOf(t: TestApp, orgId: string, type: string) {
  const rows = await t.db.prisma.event.findMany({ where: { orgId, type }, orderBy: { createdAt: 'asc' } });
  return rows.map((r) => r.data as Record<string, any>);
}
