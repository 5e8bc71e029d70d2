import type { Tx } from '../../db/transaction.ts';
import { ValidationError, type FieldErrors } from '../../core/errors.ts';

export type ReferenceKind = 'asset' | 'yard' | 'user' | 'project' | 'tool' | 'workOrder' | 'flag';

export interface Reference {
  field: string;
  kind: ReferenceKind;
  id: string | null | undefined;
}

async function existsInOrg(tx: Tx, orgId: string, kind: ReferenceKind, id: string): Promise<boolean> {
  const where = { id, orgId };
  const select = { id: true } as const;
  switch (kind) {
    case 'asset':
      return (await tx.asset.findFirst({ where, select })) !== null;
    case 'yard':
      return (await tx.yard.findFirst({ where, select })) !== null;
    case 'user':
      return (await tx.user.findFirst({ where: { ...where, removedAt: null }, select })) !== null;
    case 'project':
      return (await tx.project.findFirst({ where, select })) !== null;
    case 'tool':
      return (await tx.tool.findFirst({ where, select })) !== null;
    case 'workOrder':
      return (await tx.workOrder.findFirst({ where, select })) !== null;
    case 'flag':
      return (await tx.flag.findFirst({ where, select })) !== null;
  }
}

/**
 * Checks that every referenced row belongs to the caller's organisation (tenancy in the `where`), and
 * reports all the failing fields at once as 422. Null and omitted references are not checked.
 */
export async function assertReferences(tx: Tx, orgId: string, refs: Reference[]): Promise<void> {
  const errors: FieldErrors = {};
  for (const ref of refs) {
    if (ref.id == null) continue;
    if (!(await existsInOrg(tx, orgId, ref.kind, ref.id)))
      errors[ref.field] = `no ${ref.kind} with this id in your organisation`;
  }
  if (Object.keys(errors).length > 0) throw new ValidationError(errors);
}
