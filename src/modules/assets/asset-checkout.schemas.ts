import { z } from 'zod';
import { dateTimeInput } from '../../core/schemas.ts';
import { clampText } from '../../core/input-guard.ts';
import { AssetCheckoutState } from './assets.schemas.ts';

export const CHECKOUT_NOTE_MAX = 500;

/** Notes longer than the cap are cut to it rather than rejected (spec: clamped); blank is stored as null. */
const clampedNote = () =>
  z
    .string()
    .nullable()
    .optional()
    .transform((s) => {
      const trimmed = s?.trim();
      return trimmed ? clampText(trimmed, CHECKOUT_NOTE_MAX) : null;
    })
    .describe(`Free text; longer notes are clamped to ${CHECKOUT_NOTE_MAX} characters`);

const id = () => z.string().min(1).max(100).nullable().optional();

export const CheckoutAssetBody = z
  .object({
    toUserId: id().describe('User of the organisation taking the asset'),
    toProjectId: id().describe('Project of the organisation the asset goes to'),
    expectedReturnAt: dateTimeInput().nullable().optional(),
    note: clampedNote(),
    force: z.boolean().optional().describe('Take the asset over from the user it is checked out to'),
  })
  .superRefine((body, ctx) => {
    if (body.toUserId == null && body.toProjectId == null) {
      for (const field of ['toUserId', 'toProjectId']) {
        ctx.addIssue({ code: 'custom', path: [field], message: 'send toUserId and/or toProjectId' });
      }
    }
  })
  .describe('The new checkout target: toUserId and/or toProjectId (at least one)');
export type CheckoutAssetInput = z.output<typeof CheckoutAssetBody>;

export const CheckinAssetBody = z
  .object({ note: clampedNote().describe('Goes into the asset.checked_in event only; clamped to 500 characters') })
  // A body-less POST arrives as null: the body is optional.
  .nullish();
export type CheckinAssetInput = z.output<typeof CheckinAssetBody>;

export const AssetCheckoutResponse = z.object({
  ok: z.literal(true),
  assetId: z.string(),
  changed: z.boolean().describe('False when the call found the asset already in the requested state (no event sent)'),
  checkout: AssetCheckoutState.nullable().describe(
    'The checkout after the call (the same object as on the asset detail); null when checked in',
  ),
});
