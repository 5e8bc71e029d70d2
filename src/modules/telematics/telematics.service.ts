import { randomUUID } from 'node:crypto';
import type { Prisma } from '../../generated/prisma/client.ts';
import type { RequestContext } from '../../core/context.ts';
import { notFound, ValidationError } from '../../core/errors.ts';
import { decodeCursor, paginate, timeIdCursor } from '../../core/pagination.ts';
import { transaction } from '../../db/transaction.ts';
import { checkWebhookUrl } from '../../security/url-guard.ts';
import { isUniqueViolation } from '../shared/unique-violation.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import { createFeedClient } from './telematics-feed.adapter.ts';
import { createTelematicsSync } from './telematics-sync.job.ts';
import { secretSubject } from './telematics-secrets.repository.ts';
import { listConnections, listEquipment, listRuns, nearestYard } from './telematics.repository.ts';
import {
  toAssetTelematics,
  toConnection,
  toEquipment,
  toRun,
  type AuthInputValue,
  type CreateConnectionInput,
  type UpdateConnectionInput,
} from './telematics.schemas.ts';

type Deps = Pick<ServiceDeps, 'db' | 'log' | 'background' | 'config' | 'secretBox' | 'metrics'>;

export function createTelematicsService(deps: Deps) {
  const { db, config, secretBox } = deps;
  const client = createFeedClient({
    timeoutMs: config.telematics.timeoutMs,
    maxPageBytes: config.telematics.maxPageBytes,
    allowPrivateNetworks: config.webhooks.allowPrivateNetworks,
    caFile: config.webhooks.caFile,
    retries: config.telematics.retries,
    retryBaseMs: config.telematics.retryBaseMs,
    maxRetryAfterSec: config.telematics.maxRetryAfterSec,
  });
  const sync = createTelematicsSync(deps, client);

  /** The save-time URL checks of webhooks (https, no credentials, public unless allowed), per field. */
  async function checkUrls(fields: Record<string, string | undefined>) {
    const errors: Record<string, string> = {};
    for (const [field, url] of Object.entries(fields)) {
      if (url === undefined) continue;
      const problem = await checkWebhookUrl(url, {
        allowPrivateNetworks: config.webhooks.allowPrivateNetworks,
        debug: (why) => deps.log.debug({ field, why }, 'telematics URL refused'),
      });
      if (problem) errors[field] = problem;
    }
    if (Object.keys(errors).length) throw new ValidationError(errors);
  }

  /** The auth columns: non-secret fields in clear, the one secret sealed (bound to the connection's id). */
  function authColumns(id: string, auth: AuthInputValue) {
    const sealed = (s: string) => secretBox.sealSecret(secretSubject(id), 'current', s);
    const base = {
      authType: auth.type,
      authTokenUrl: null as string | null,
      authClientId: null as string | null,
      authScope: null as string | null,
      authUsername: null as string | null,
      secretCiphertext: null as string | null,
    };
    if (auth.type === 'oauth2-client-credentials')
      return {
        ...base,
        authTokenUrl: auth.tokenUrl,
        authClientId: auth.clientId,
        authScope: auth.scope || null,
        secretCiphertext: sealed(auth.clientSecret),
      };
    if (auth.type === 'basic') return { ...base, authUsername: auth.username, secretCiphertext: sealed(auth.password) };
    if (auth.type === 'bearer') return { ...base, secretCiphertext: sealed(auth.token) };
    return base;
  }

  async function owned(ctx: RequestContext, id: string) {
    const c = await db.prisma.telematicsConnection.findFirst({ where: { id, orgId: ctx.orgId } });
    if (!c) throw notFound('Telematics connection');
    return c;
  }

  return {
    async create(ctx: RequestContext, input: CreateConnectionInput) {
      await checkUrls({
        fleetUrl: input.fleetUrl,
        'auth.tokenUrl': input.auth.type === 'oauth2-client-credentials' ? input.auth.tokenUrl : undefined,
      });
      const id = randomUUID();
      const enabled = input.enabled ?? true;
      await db.prisma.telematicsConnection.create({
        data: {
          id,
          orgId: ctx.orgId,
          name: input.name,
          standard: input.standard,
          fleetUrl: input.fleetUrl,
          pollMinutes: input.pollMinutes ?? 15,
          enabled,
          // The first scheduled run is due at once; a sync can be asked for any time.
          nextRunAt: new Date(),
          ...authColumns(id, input.auth),
        },
      });
      return { ok: true as const, connectionId: id };
    },

    async list(ctx: RequestContext, query: { limit: number; cursor?: string }) {
      const after = timeIdCursor(decodeCursor(query.cursor, 2));
      const rows = await listConnections(db.sql, ctx.orgId, after, query.limit + 1);
      const { page, nextCursor } = paginate(rows, query.limit, (c) => [c.createdAt.toISOString(), c.id]);
      return { ok: true as const, connections: page.map(toConnection), nextCursor };
    },

    async get(ctx: RequestContext, id: string) {
      return { ok: true as const, connection: toConnection(await owned(ctx, id)) };
    },

    async update(ctx: RequestContext, id: string, patch: UpdateConnectionInput) {
      if (Object.values(patch).every((v) => v === undefined))
        throw new ValidationError({ body: 'send at least one of: name, fleetUrl, auth, pollMinutes, enabled' });
      await checkUrls({
        fleetUrl: patch.fleetUrl,
        'auth.tokenUrl': patch.auth?.type === 'oauth2-client-credentials' ? patch.auth.tokenUrl : undefined,
      });
      const before = await owned(ctx, id);
      // Stored credentials belong to the origin they were given for: a feed moved elsewhere needs them again, or a
      // key that may only write connections could send the provider's secret to a host of its choosing.
      if (
        patch.fleetUrl !== undefined &&
        !patch.auth &&
        before.authType !== 'none' &&
        new URL(patch.fleetUrl).origin !== new URL(before.fleetUrl).origin
      )
        throw new ValidationError({
          auth: 'is required when fleetUrl moves to another origin: stored credentials are never sent to a new host',
        });
      const data: Prisma.TelematicsConnectionUpdateInput = {};
      if (patch.name !== undefined) data.name = patch.name;
      if (patch.fleetUrl !== undefined) data.fleetUrl = patch.fleetUrl;
      if (patch.pollMinutes !== undefined) data.pollMinutes = patch.pollMinutes;
      if (patch.enabled !== undefined) {
        data.enabled = patch.enabled;
        // Re-enabled: due at once, not after a stale nextRunAt.
        if (patch.enabled && !before.enabled) data.nextRunAt = new Date();
      }
      if (patch.auth) Object.assign(data, authColumns(id, patch.auth));
      const updated = await db.prisma.telematicsConnection.update({ where: { id: before.id }, data });
      return { ok: true as const, connection: toConnection(updated) };
    },

    /** Removes the connection, its runs and its machines; readings and flags it created stay. */
    async remove(ctx: RequestContext, id: string) {
      const { count } = await db.prisma.telematicsConnection.deleteMany({ where: { id, orgId: ctx.orgId } });
      if (count === 0) throw notFound('Telematics connection');
      return { ok: true as const, connectionId: id };
    },

    async sync(ctx: RequestContext, id: string) {
      const runId = await sync.start(ctx.orgId, id);
      if (!runId) throw notFound('Telematics connection');
      return { ok: true as const, runId };
    },

    async runs(ctx: RequestContext, id: string, query: { limit: number; cursor?: string }) {
      await owned(ctx, id);
      const after = timeIdCursor(decodeCursor(query.cursor, 2));
      const rows = await listRuns(db.sql, id, after, query.limit + 1);
      const { page, nextCursor } = paginate(rows, query.limit, (r) => [r.startedAt.toISOString(), r.id]);
      return { ok: true as const, runs: page.map(toRun), nextCursor };
    },

    async equipment(ctx: RequestContext, id: string, query: { limit: number; cursor?: string; matched?: boolean }) {
      await owned(ctx, id);
      const cursor = decodeCursor(query.cursor, 1);
      if (cursor && typeof cursor[0] !== 'string')
        throw new ValidationError({ cursor: 'is not a cursor returned by this endpoint' });
      const rows = await listEquipment(db.sql, id, query.matched, (cursor?.[0] as string) ?? null, query.limit + 1);
      const { page, nextCursor } = paginate(rows, query.limit, (e) => [e.equipmentKey]);
      return { ok: true as const, equipment: page.map(toEquipment), nextCursor };
    },

    /** Links (or with null unlinks) a machine; an asset another machine feeds is a 422 naming it. */
    async link(ctx: RequestContext, id: string, equipmentKey: string, assetId: string | null) {
      await owned(ctx, id);
      try {
        const updated = await transaction(db, async (tx) => {
          const machine = await tx.telematicsEquipment.findFirst({ where: { connectionId: id, equipmentKey } });
          if (!machine) throw notFound('Machine');
          if (assetId !== null) {
            const asset = await tx.asset.findFirst({ where: { id: assetId, orgId: ctx.orgId }, select: { id: true } });
            if (!asset) throw new ValidationError({ assetId: 'no asset with this id in your organisation' });
            const other = await tx.telematicsEquipment.findFirst({
              where: { orgId: ctx.orgId, assetId, NOT: { id: machine.id } },
              select: { equipmentKey: true },
            });
            if (other) throw alreadyFed(other.equipmentKey);
          }
          return tx.telematicsEquipment.update({
            where: { id: machine.id },
            data: { assetId, linkMode: assetId === null ? 'none' : 'manual' },
          });
        });
        return { ok: true as const, equipment: toEquipment(updated) };
      } catch (err) {
        if (isUniqueViolation(err)) throw alreadyFed(null);
        throw err;
      }
    },

    async assetTelematics(ctx: RequestContext, assetId: string) {
      const machine = await db.prisma.telematicsEquipment.findFirst({ where: { orgId: ctx.orgId, assetId } });
      if (!machine) throw notFound('Telematics for this asset');
      const yard =
        machine.lat !== null && machine.lng !== null
          ? await nearestYard(db.sql, ctx.orgId, machine.lat, machine.lng)
          : null;
      return { ok: true as const, telematics: toAssetTelematics(machine, yard) };
    },

    /** The scheduler tick (jobs.ts). */
    tick: () => sync.tick(),

    /** Shutdown, first step: running runs stop at their next wait and end FAILED ("stopped"). */
    stop: () => sync.stop(),
    /** Shutdown, once background work is idle: closes the connections to providers. */
    close: () => client.close(),
  };
}

const alreadyFed = (key: string | null) =>
  new ValidationError({
    assetId: key
      ? `another machine (${key}) already feeds this asset; unlink it first`
      : 'another machine already feeds this asset',
  });

export type TelematicsService = ReturnType<typeof createTelematicsService>;
