import { isDeepStrictEqual } from 'node:util';
import type { Prisma } from '../../generated/prisma/client.ts';
import { transaction } from '../../db/transaction.ts';
import type { RequestContext } from '../../core/context.ts';
import { notFound, ValidationError } from '../../core/errors.ts';
import { formArchived } from './inspections.rules.ts';
import { decodeCursor, newestFirstKey, paginate, timeIdCursor } from '../../core/pagination.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import { findTemplate, INSPECTION_TEMPLATES } from './inspection-templates.data.ts';
import { formVersions, listInspectionForms, lockOwnedForm } from './inspection-forms.repository.ts';
import {
  normaliseItem,
  toInspectionFormRow,
  type CreateInspectionFormInput,
  type InspectionItem,
  type ListInspectionFormsInput,
  type UpdateInspectionFormInput,
} from './inspection-forms.schemas.ts';

export function createInspectionFormService({ db }: Pick<ServiceDeps, 'db'>) {
  return {
    templates() {
      return {
        ok: true as const,
        templates: INSPECTION_TEMPLATES.map((t) => ({ ...t, key: t.id, items: [...t.items] })),
      };
    },

    async list(ctx: RequestContext, query: ListInspectionFormsInput) {
      const rows = await listInspectionForms(db.sql, ctx.orgId, query, timeIdCursor(decodeCursor(query.cursor, 2)));
      const { page, nextCursor } = paginate(rows, query.limit, newestFirstKey);
      const versions = await formVersions(
        db.prisma,
        page.map((f) => ({ formId: f.id, version: f.currentVersion })),
      );
      const byForm = new Map(versions.map((v) => [v.formId, v]));
      return {
        ok: true as const,
        inspectionForms: page.map((f) => toInspectionFormRow(f, byForm.get(f.id)!)),
        nextCursor,
      };
    },

    async create(ctx: RequestContext, input: CreateInspectionFormInput) {
      const template = input.template !== undefined ? findTemplate(input.template) : null;
      if (input.template !== undefined && !template)
        throw new ValidationError({
          template: 'is not a built-in template; GET /inspection-form-templates lists them',
        });
      const items: InspectionItem[] = template ? template.items : input.items!.map(normaliseItem);
      const form = await transaction(db, async (tx) => {
        const created = await tx.inspectionForm.create({
          data: {
            orgId: ctx.orgId,
            name: input.name ?? template!.name,
            description: input.description !== undefined ? input.description : (template?.description ?? null),
            assetClasses: input.assetClasses ?? template?.assetClasses ?? [],
            outOfServiceOnCriticalFailure:
              input.outOfServiceOnCriticalFailure ?? template?.outOfServiceOnCriticalFailure ?? true,
            template: template?.id ?? null,
            createdById: ctx.actorId,
          },
        });
        await tx.inspectionFormVersion.create({
          data: { formId: created.id, version: 1, items: items as unknown as Prisma.InputJsonValue },
        });
        return created;
      });
      return { ok: true as const, inspectionFormId: form.id, version: form.currentVersion };
    },

    async get(ctx: RequestContext, id: string, version?: number) {
      const form = await db.prisma.inspectionForm.findFirst({ where: { id, orgId: ctx.orgId } });
      if (!form) throw notFound('Inspection form');
      const row = await db.prisma.inspectionFormVersion.findUnique({
        where: { formId_version: { formId: id, version: version ?? form.currentVersion } },
      });
      if (!row) throw notFound('Inspection form version');
      return { ok: true as const, inspectionForm: toInspectionFormRow(form, row) };
    },

    /** Changed items become the next version; the other fields change in place. Archived forms are frozen. */
    async update(ctx: RequestContext, id: string, patch: UpdateInspectionFormInput) {
      const fields = ['name', 'description', 'assetClasses', 'outOfServiceOnCriticalFailure', 'items'] as const;
      if (!fields.some((f) => patch[f] !== undefined))
        throw new ValidationError({ body: `send at least one of: ${fields.join(', ')}` }, 'The patch is empty');
      return transaction(db, async (tx) => {
        const form = await lockOwnedForm(tx, ctx.orgId, id);
        if (!form) throw notFound('Inspection form');
        if (form.status === 'ARCHIVED') throw formArchived();
        const data: Prisma.InspectionFormUncheckedUpdateInput = {};
        if (patch.name !== undefined) data.name = patch.name;
        if (patch.description !== undefined) data.description = patch.description;
        if (patch.assetClasses !== undefined) data.assetClasses = patch.assetClasses ?? [];
        if (patch.outOfServiceOnCriticalFailure !== undefined)
          data.outOfServiceOnCriticalFailure = patch.outOfServiceOnCriticalFailure;
        let version = form.currentVersion;
        if (patch.items !== undefined) {
          const items = patch.items.map(normaliseItem);
          const current = await tx.inspectionFormVersion.findUniqueOrThrow({
            where: { formId_version: { formId: id, version } },
          });
          if (!isDeepStrictEqual(current.items, items)) {
            version += 1;
            await tx.inspectionFormVersion.create({
              data: { formId: id, version, items: items as unknown as Prisma.InputJsonValue },
            });
            data.currentVersion = version;
          }
        }
        await tx.inspectionForm.update({ where: { id }, data });
        return { ok: true as const, inspectionFormId: id, version };
      });
    },

    /** DELETE archives: submissions keep their form and version; a second DELETE answers the same. */
    async archive(ctx: RequestContext, id: string) {
      return transaction(db, async (tx) => {
        const form = await lockOwnedForm(tx, ctx.orgId, id);
        if (!form) throw notFound('Inspection form');
        const archivedAt = form.archivedAt ?? new Date();
        if (form.status !== 'ARCHIVED')
          await tx.inspectionForm.update({ where: { id }, data: { status: 'ARCHIVED', archivedAt } });
        return {
          ok: true as const,
          inspectionFormId: id,
          status: 'ARCHIVED' as const,
          archivedAt: archivedAt.toISOString(),
        };
      });
    },
  };
}

export type InspectionFormService = ReturnType<typeof createInspectionFormService>;
