// The pure rules of a submission: each answer checked against its item (type, required, bounds, photos), which
// items failed, and the text of the flag a failure opens. The service applies them inside the transaction.
import { conflict, type FieldErrors } from '../../core/errors.ts';
import { clampText } from '../../core/input-guard.ts';
import type { InspectionItem } from './inspection-forms.schemas.ts';
import type { InspectionResultInput } from './inspections.schemas.ts';

export interface Answer {
  item: InspectionItem;
  pass: boolean | null;
  value: number | string | null;
  note: string | null;
  attachmentIds: string[];
  failed: boolean;
}

export interface Evaluation {
  errors: FieldErrors;
  /** One per answered item, in the form's order. */
  answers: Answer[];
  failures: Answer[];
  /** The meter item's answer, when given. */
  meter: Answer | null;
}

/** fieldErrors of a submission are keyed `results.<itemKey>`. */
export const resultField = (itemKey: string) => `results.${itemKey}`;

const isAnswered = (r: InspectionResultInput) =>
  r.pass != null || r.value != null || (r.attachmentIds !== undefined && r.attachmentIds.length > 0);

/** Why the answer does not fit the item's type, or null; `failed` is then decided by failedAnswer. */
function typeProblem(item: InspectionItem, r: InspectionResultInput): string | null {
  const attachments = r.attachmentIds ?? [];
  switch (item.type) {
    case 'pass_fail':
      if (r.value != null) return 'is a pass_fail item: answer with pass, not value';
      return typeof r.pass === 'boolean' ? null : 'answer with pass: true or false';
    case 'number':
      if (r.pass != null) return 'is a number item: answer with value, not pass';
      return typeof r.value === 'number' && Number.isFinite(r.value) ? null : 'value must be a number';
    case 'text':
      if (r.pass != null) return 'is a text item: answer with value, not pass';
      return typeof r.value === 'string' ? null : 'value must be text';
    case 'meter':
      if (r.pass != null) return 'is a meter item: answer with value (the reading), not pass';
      return typeof r.value === 'number' && r.value >= 0 && r.value <= 1e9
        ? null
        : 'value must be a meter reading between 0 and 1000000000';
    case 'photo':
      if (r.pass != null || r.value != null) return 'is a photo item: answer with attachmentIds';
      return attachments.length > 0 ? null : 'needs at least one attachment in attachmentIds';
  }
}

function failedAnswer(item: InspectionItem, r: InspectionResultInput): boolean {
  if (item.type === 'pass_fail') return r.pass === false;
  if (item.type === 'number' && typeof r.value === 'number')
    return (item.min !== null && r.value < item.min) || (item.max !== null && r.value > item.max);
  return false;
}

/** Checks every answer against the form version's items; `errors` is empty when the submission is valid. */
export function evaluateResults(
  items: InspectionItem[],
  results: InspectionResultInput[],
  version: number,
): Evaluation {
  const errors: FieldErrors = {};
  const byKey = new Map<string, InspectionResultInput>();
  const known = new Set(items.map((i) => i.key));
  for (const r of results) {
    if (!known.has(r.itemKey)) errors[resultField(r.itemKey)] = `is not an item of this form (version ${version})`;
    else if (byKey.has(r.itemKey)) errors[resultField(r.itemKey)] = 'is answered more than once';
    else byKey.set(r.itemKey, r);
  }
  const answers: Answer[] = [];
  for (const item of items) {
    const r = byKey.get(item.key);
    const field = resultField(item.key);
    if (!r || !isAnswered(r)) {
      if (item.required && !errors[field]) errors[field] = `is required (${item.type} item "${item.label}")`;
      continue;
    }
    const problem = typeProblem(item, r);
    if (problem) {
      errors[field] ??= problem;
      continue;
    }
    const failed = failedAnswer(item, r);
    const attachmentIds = [...new Set(r.attachmentIds ?? [])];
    if (failed && item.photoRequiredOnFail && attachmentIds.length === 0)
      errors[field] ??= 'failed, and this item needs a photo when it fails: name it in attachmentIds';
    answers.push({
      item,
      pass: typeof r.pass === 'boolean' ? r.pass : null,
      value: typeof r.value === 'number' || typeof r.value === 'string' ? r.value : null,
      note: r.note ?? null,
      attachmentIds,
      failed,
    });
  }
  return {
    errors,
    answers,
    failures: answers.filter((a) => a.failed),
    meter: answers.find((a) => a.item.type === 'meter') ?? null,
  };
}

export const FLAG_REASON_MAX = 500;

/** The flag's reason: the form, the item (with a number's value and bounds) and the inspector's note. */
export function flagReason(formName: string, answer: Answer): string {
  const { item } = answer;
  let what = `${item.label} failed`;
  if (item.type === 'number' && typeof answer.value === 'number') {
    const bounds = [item.min !== null ? `min ${item.min}` : null, item.max !== null ? `max ${item.max}` : null];
    what = `${item.label}: ${answer.value} is outside ${bounds.filter(Boolean).join(', ')}`;
  }
  const text = `Inspection "${formName}": ${what}${answer.note ? ` - ${answer.note}` : ''}`;
  return text.length > FLAG_REASON_MAX ? `${clampText(text, FLAG_REASON_MAX - 1)}…` : text;
}

/** The key of the one open flag per asset and form item: a later failure of the item adds to it. */
export const flagDedupeKey = (formId: string, itemKey: string) => `inspection:${formId}:${itemKey}`;

/** How far ahead of the server clock an inspection (or its signature) may be dated: device clock skew. */
export const CLOCK_SKEW_MS = 5 * 60 * 1000;

/** Why inspectedAt is refused, or null: not in the future beyond the skew, not before the asset was added. */
export function inspectedAtProblem(inspectedAt: Date, now: Date, assetCreatedAt: Date): string | null {
  if (inspectedAt.getTime() > now.getTime() + CLOCK_SKEW_MS) return 'cannot be in the future';
  if (inspectedAt.getTime() < assetCreatedAt.getTime() - CLOCK_SKEW_MS)
    return `is before the asset was added (${assetCreatedAt.toISOString()})`;
  return null;
}

export const formArchived = () =>
  conflict('inspection_form_archived', 'This inspection form is archived; it takes no changes and no submissions');
