import type { TestApp } from '../app/test-app.ts';
import { makeTool } from '../app/factories.ts';
import type { TestTenant } from '../app/tenants.ts';

/** Small shorthands shared by the tools test files. */
export function toolHelpers(ctx: () => { t: TestApp; acme: TestTenant }) {
  return {
    createTool: (body: Record<string, unknown>, key = ctx().acme.key) => makeTool(ctx().t, key, body),
    /** Outbox events of a type for one organisation, oldest first. */
    async outbox(type: string, orgId = ctx().acme.orgId) {
      const rows = await ctx().t.db.prisma.event.findMany({ where: { orgId, type }, orderBy: { createdAt: 'asc' } });
      return rows.map((r) => r.data as Record<string, any>);
    },
    async toolEvents(toolId: string) {
      return ctx().t.db.prisma.toolEvent.findMany({
        where: { toolId },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      });
    },
  };
}
