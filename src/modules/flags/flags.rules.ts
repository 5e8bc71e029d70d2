import type { Flag } from '../../generated/prisma/client.ts';
import type { FieldErrors } from '../../core/errors.ts';
import type { UpdateFlagInput } from './flags.schemas.ts';

/** A RED resolution note must say what was done: at least this long and this many words... */
export const RED_NOTE_MIN_CHARS = 15;
export const RED_NOTE_MIN_WORDS = 3;
/** ...and not consist only of filler that says nothing about the repair. */
const PLACEHOLDER_WORDS = new Set([
  'fixed',
  'fix',
  'done',
  'ok',
  'okay',
  'resolved',
  'repaired',
  'good',
  'fine',
  'all',
  'na',
  'n/a',
  'none',
  'test',
  'testing',
  'tbd',
  'complete',
  'completed',
  'checked',
  'works',
  'working',
  'now',
  'it',
  'is',
  'was',
  'the',
  'a',
  'see',
  'above',
  'asdf',
  'xxx',
  'no',
  'issue',
  'issues',
  'problem',
  'nothing',
  'closed',
  'close',
  'yes',
  'and',
]);

/** Why a note is not specific enough for a RED flag, or null when it is. */
export function unspecificNoteReason(note: string | null | undefined): string | null {
  if (!note) return 'is required to resolve a RED flag: describe what was repaired';
  const words = note
    .toLowerCase()
    .split(/\s+/)
    .map((w) => w.replace(/[^\p{L}\p{N}/]/gu, ''))
    .filter(Boolean);
  if (note.length < RED_NOTE_MIN_CHARS || words.length < RED_NOTE_MIN_WORDS) {
    return `must describe the repair in at least ${RED_NOTE_MIN_WORDS} words and ${RED_NOTE_MIN_CHARS} characters`;
  }
  if (words.every((w) => PLACEHOLDER_WORDS.has(w))) return 'must describe the repair, not just say it is fixed';
  return null;
}

/**
 * The resolution rules of PATCH /flags/{id}: only status RESOLVED; RED flags need a specific
 * resolutionNote and returnToServiceConfirmed = true. Returns the field errors (empty when valid).
 */
export function resolutionErrors(flag: Pick<Flag, 'severity'>, input: UpdateFlagInput): FieldErrors {
  const errors: FieldErrors = {};
  if (input.status === undefined) {
    errors.status = 'is required; the only accepted value is RESOLVED';
  } else if (input.status !== 'RESOLVED') {
    errors.status = 'only RESOLVED is accepted: flags cannot be re-opened or moved to another status';
  }
  if (flag.severity === 'RED') {
    const noteProblem = unspecificNoteReason(input.resolutionNote);
    if (noteProblem) errors.resolutionNote = noteProblem;
    if (input.returnToServiceConfirmed !== true) errors.returnToServiceConfirmed = 'must be true to resolve a RED flag';
  }
  return errors;
}
