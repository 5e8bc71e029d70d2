import type { Database } from '../../db/database.ts';
import type { RequestContext } from '../../core/context.ts';
import { ApiError, notFound } from '../../core/errors.ts';
import { decodeCursor, newestFirstAfter, newestFirstKey, newestFirstOrder, paginate } from '../../core/pagination.ts';
import type { ImportMapping } from '../../generated/prisma/client.ts';
import { isUniqueViolation } from '../shared/unique-violation.ts';
import type { ImportOptionsInput, ImportType } from './imports.schemas.ts';

const toSavedMapping = (m: ImportMapping) => ({
  id: m.id,
  name: m.name,
  type: m.type as ImportType,
  mapping: m.mapping as Record<string, string | null>,
  options: m.options as Record<string, unknown>,
  createdAt: m.createdAt.toISOString(),
});

/** Saved column mappings and options (a fuel-card provider's statement layout), part of the imports service. */
export function createImportMappings(db: Database) {
  return {
    async owned(ctx: RequestContext, id: string) {
      const m = await db.prisma.importMapping.findFirst({ where: { id, orgId: ctx.orgId } });
      if (!m) throw notFound('Import mapping');
      return m;
    },

    async createMapping(
      ctx: RequestContext,
      input: { name: string; type: ImportType; mapping: Record<string, string | null>; options?: ImportOptionsInput },
    ) {
      try {
        const m = await db.prisma.importMapping.create({
          data: {
            orgId: ctx.orgId,
            name: input.name,
            type: input.type,
            mapping: input.mapping,
            options: input.options ?? {},
          },
        });
        return { ok: true as const, mappingId: m.id };
      } catch (err) {
        if (isUniqueViolation(err))
          throw new ApiError(409, 'mapping_name_taken', `A saved mapping is already named "${input.name}"`);
        throw err;
      }
    },

    async listMappings(ctx: RequestContext, q: { limit: number; cursor?: string; type?: ImportType }) {
      const rows = await db.prisma.importMapping.findMany({
        where: {
          orgId: ctx.orgId,
          ...(q.type ? { type: q.type } : {}),
          ...newestFirstAfter(decodeCursor(q.cursor, 2)),
        },
        orderBy: newestFirstOrder,
        take: q.limit + 1,
      });
      const { page, nextCursor } = paginate(rows, q.limit, newestFirstKey);
      return { ok: true as const, mappings: page.map(toSavedMapping), nextCursor };
    },
  };
}
