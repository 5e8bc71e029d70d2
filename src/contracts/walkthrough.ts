/**
 * An integrator's first session, as data: every operation of the API in a sensible order, each with the
 * request to send (`{{var}}` placeholders for ids captured earlier, `{{$timestamp}}` for unique names), the
 * status to expect, the ids to capture and the fields to check. Two consumers: the Postman collection (each
 * step becomes a request with test scripts; `newman run` in CI) and the conformance test (each step is sent
 * and its response validated against openapi.yaml). The contract generator fails when an operation has no step.
 */
import type { Step } from './walkthrough/step.ts';
import { META_STEPS } from './walkthrough/meta.ts';
import { YARD_STEPS } from './walkthrough/yards.ts';
import { PROJECT_STEPS } from './walkthrough/projects.ts';
import { ASSET_STEPS } from './walkthrough/assets.ts';
import { HOURS_STEPS } from './walkthrough/hours.ts';
import { ATTACHMENT_STEPS } from './walkthrough/attachments.ts';
import { FLAG_AND_WORK_ORDER_STEPS } from './walkthrough/flags-and-work-orders.ts';
import { SERVICE_PROGRAM_STEPS } from './walkthrough/service-programs.ts';
import { INSPECTION_STEPS } from './walkthrough/inspections.ts';
import { TOOL_STEPS } from './walkthrough/tools.ts';
import { PURCHASING_STEPS } from './walkthrough/purchasing.ts';
import { PART_STEPS } from './walkthrough/parts.ts';
import { WEBHOOK_STEPS } from './walkthrough/webhooks.ts';
import { EVENT_STEPS } from './walkthrough/events.ts';
import { TELEMATICS_STEPS } from './walkthrough/telematics.ts';
import { PEOPLE_STEPS } from './walkthrough/people.ts';
import { CLEANUP_STEPS } from './walkthrough/cleanup.ts';
import { COST_CLEANUP_STEPS, COST_STEPS } from './walkthrough/costs.ts';
import { IMPORT_STEPS } from './walkthrough/imports.ts';

export type { Check, Step } from './walkthrough/step.ts';

/** The steps in the order an integrator meets them; each part lives in src/contracts/walkthrough/. */
export const WALKTHROUGH: Step[] = [
  ...META_STEPS,
  ...YARD_STEPS,
  ...PROJECT_STEPS,
  ...ASSET_STEPS,
  ...ATTACHMENT_STEPS,
  ...HOURS_STEPS,
  ...FLAG_AND_WORK_ORDER_STEPS,
  ...SERVICE_PROGRAM_STEPS,
  ...INSPECTION_STEPS,
  ...TOOL_STEPS,
  ...PART_STEPS,
  ...PURCHASING_STEPS,
  ...WEBHOOK_STEPS,
  ...TELEMATICS_STEPS,
  ...EVENT_STEPS,
  ...PEOPLE_STEPS,
  ...COST_STEPS,
  ...IMPORT_STEPS,
  ...CLEANUP_STEPS,
  ...COST_CLEANUP_STEPS,
];

/** Placeholders replaced in a step's strings: `{{name}}` from `vars`, `{{$timestamp}}` with `now`. */
export function fill<T>(value: T, vars: Record<string, string>, now: number): T {
  const text = JSON.stringify(value);
  if (text === undefined) return value;
  const filled = text.replace(/\{\{(\$?[A-Za-z]+)\}\}/g, (match, name: string) =>
    name === '$timestamp' ? String(now) : name in vars ? vars[name] : match,
  );
  return JSON.parse(filled) as T;
}

export function valueAt(body: unknown, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>((v, key) => (v == null ? undefined : (v as Record<string, unknown>)[key]), body);
}

/** Operations of the document without a walkthrough step: the generator names them so nobody ships one untested. */
export function missingSteps(operationIds: string[]): string[] {
  const covered = new Set(WALKTHROUGH.map((s) => s.operationId));
  return operationIds.filter((id) => !covered.has(id));
}
