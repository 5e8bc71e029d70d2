import { z } from 'zod';
import { dateTime } from '../core/schemas.ts';

export const HealthResponse = z.object({
  ok: z.boolean(),
  database: z.enum(['ok', 'error', 'timeout']).describe('Result of a database ping'),
  apiVersion: z.literal('v1'),
  commit: z.string(),
  uptimeSec: z.number().int(),
  replicas: z
    .array(
      z.object({
        name: z.string().describe('host:port/database'),
        state: z
          .enum(['healthy', 'lagging', 'down', 'starting'])
          .describe('healthy: gets reads; lagging: further behind than REPLICA_MAX_LAG_MS; down: not answering'),
        lagMs: z.number().int().nullable().describe('Lag by WAL position, in milliseconds; null while unknown'),
        lagBytes: z.number().int().nullable().describe('WAL bytes not replayed yet; null while unknown'),
      }),
    )
    .optional()
    .describe('Read replicas (DATABASE_REPLICA_URLS) and their state; absent without replicas'),
});

export const LiveResponse = z.object({ ok: z.literal(true), uptimeSec: z.number().int() });

export const VersionResponse = z.object({
  ok: z.literal(true),
  commit: z.string().describe('Deployed commit, short id'),
  branch: z.string(),
  uptimeSec: z.number().int().describe('Process uptime in seconds'),
  nodeVersion: z.string().describe('Runtime version, e.g. v20.19.0'),
  apiVersion: z.literal('v1'),
});

export const ChangelogResponse = z.object({
  entries: z.array(
    z.object({
      version: z.string(),
      date: z.string().nullable(),
      changes: z.array(z.object({ type: z.string().describe('added, changed, fixed, ...'), text: z.string() })),
    }),
  ),
});

export const MeResponse = z.object({
  ok: z.literal(true),
  organization: z.object({ id: z.string(), name: z.string(), slug: z.string(), createdAt: dateTime() }),
  apiKey: z.object({
    id: z.string(),
    label: z.string(),
    scopes: z.array(z.string()),
    createdAt: dateTime(),
    lastUsedAt: dateTime().nullable(),
    expiresAt: dateTime().nullable(),
    createdBy: z.object({ id: z.string(), name: z.string().nullable(), email: z.string() }).nullable(),
  }),
});

export const UsageResponse = z.object({
  ok: z.literal(true),
  keyId: z.string(),
  rateLimit: z.object({
    limit: z.number().int(),
    remaining: z.number().int(),
    resetEpochSec: z.number().int(),
    resetIn: z.number().int().describe('Seconds until the window resets'),
    windowSec: z.number().int(),
  }),
});
