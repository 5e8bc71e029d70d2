import type { TestApp } from '../../helpers/app.ts';
import type { TestTenant } from '../../helpers/fixtures.ts';

/** Small shorthands shared by the tools test files. */
export function toolHelpers(ctx: () => { t: TestApp; acme: TestTenant }) {
  const api = () => ctx().t.api;
  return {
    async createTool(body: Record<string, unknown>, key = ctx().acme.key): Promise<string> {
      const res = await api().post('/api/v1/tools', key, body);
      if (res.statusCode !== 201) throw new Error(`create failed: ${res.statusCode} ${res.body}`);
      return res.json().toolId;
    },
    /** Outbox events of a type for one organisation, oldest first. */
    async outbox(type: string, orgId = ctx().acme.orgId) {
      const rows = await ctx().t.db.prisma.event.findMany({ where: { orgId, type }, orderBy: { createdAt: 'asc' } });
      return rows.map((r) => r.data as Record<string, any>);
    },
    async toolEvents(toolId: string) {
      return ctx().t.db.prisma.toolEvent.findMany({ where: { toolId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
    },
  };
}
