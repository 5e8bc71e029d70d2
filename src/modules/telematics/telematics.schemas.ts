import { z } from 'zod';
import type { TelematicsConnection, TelematicsEquipment, TelematicsRun } from '../../generated/prisma/client.ts';
import { cursorQuery, dateTime, iso, limitQuery, requiredText } from '../../core/schemas.ts';
import { connectionStatus } from './telematics.rules.ts';

export const STANDARDS = ['iso-15143-3'] as const;
export const AUTH_TYPES = ['oauth2-client-credentials', 'basic', 'bearer', 'none'] as const;
export const CONNECTION_STATUSES = ['NEVER_RUN', 'OK', 'FAILING', 'DISABLED'] as const;
export const RUN_STATUSES = ['RUNNING', 'SUCCEEDED', 'FAILED'] as const;

const url = () => z.string().min(1, 'is required').max(2000).describe('An absolute https:// URL');
const secret = (what: string) => z.string().min(1, 'is required').max(4000).describe(`${what}; write-only`);

// ---- requests

export const AuthInput = z
  .discriminatedUnion(
    'type',
    [
      z.object({
        type: z.literal('oauth2-client-credentials'),
        tokenUrl: url(),
        clientId: requiredText(500),
        clientSecret: secret('Client secret'),
        scope: z.string().trim().max(1000).nullable().optional(),
      }),
      z.object({ type: z.literal('basic'), username: requiredText(500), password: secret('Password') }),
      z.object({ type: z.literal('bearer'), token: secret('Bearer token') }),
      z.object({ type: z.literal('none') }),
    ],
    { error: `type must be one of ${AUTH_TYPES.join(', ')}` },
  )
  .describe('How the provider authenticates this service; secrets are encrypted at rest and never returned');
export type AuthInputValue = z.output<typeof AuthInput>;

const pollMinutes = z
  .number()
  .int()
  .min(15, 'must be at least 15 (providers answer 429 to more than one request per URL per 15 minutes)')
  .max(1440);

export const CreateConnectionBody = z.object({
  name: requiredText(200),
  standard: z.enum(STANDARDS, { error: 'must be iso-15143-3' }),
  fleetUrl: url().describe('The Fleet snapshot (page one) of the provider; https only'),
  auth: AuthInput,
  pollMinutes: pollMinutes.optional().describe('Minutes between scheduled runs, 15-1440 (default 15)'),
  enabled: z.boolean().optional().describe('Scheduled runs happen only while enabled (default true)'),
});
export type CreateConnectionInput = z.output<typeof CreateConnectionBody>;

export const UpdateConnectionBody = z
  .object({
    name: requiredText(200).optional(),
    fleetUrl: url().optional(),
    auth: AuthInput.optional(),
    pollMinutes: pollMinutes.optional(),
    enabled: z.boolean().optional(),
  })
  .meta({ minProperties: 1 });
export type UpdateConnectionInput = z.output<typeof UpdateConnectionBody>;

export const ListQuery = z.object({ limit: limitQuery, cursor: cursorQuery });
export const EquipmentQuery = z.object({
  limit: limitQuery,
  cursor: cursorQuery,
  matched: z
    .enum(['true', 'false'])
    .optional()
    .transform((v) => (v === undefined ? undefined : v === 'true'))
    .describe('true: machines linked to an asset; false: machines without one'),
});
export const EquipmentParams = z.object({ id: z.string().min(1), equipmentKey: z.string().min(1).max(300) });
export const LinkEquipmentBody = z.object({
  assetId: z.string().min(1).max(100).nullable().describe('The asset this machine feeds; null unlinks it'),
});

// ---- responses

export const AuthView = z
  .object({
    type: z.enum(AUTH_TYPES),
    tokenUrl: z.string().optional(),
    clientId: z.string().optional(),
    scope: z.string().nullable().optional(),
    username: z.string().optional(),
  })
  .describe('The auth type and its non-secret fields')
  .meta({ id: 'TelematicsAuth' });

export const Connection = z
  .object({
    connectionId: z.string(),
    name: z.string(),
    standard: z.enum(STANDARDS),
    fleetUrl: z.string(),
    auth: AuthView,
    pollMinutes: z.number().int(),
    enabled: z.boolean(),
    status: z.enum(CONNECTION_STATUSES).describe('FAILING: the last run failed'),
    lastRunAt: dateTime().nullable(),
    lastSuccessAt: dateTime().nullable(),
    lastError: z.string().nullable(),
    nextRunAt: dateTime().nullable().describe('When the scheduler runs it next (null while disabled)'),
    createdAt: dateTime(),
    updatedAt: dateTime(),
  })
  .meta({ id: 'TelematicsConnection' });

export const Run = z
  .object({
    runId: z.string(),
    status: z.enum(RUN_STATUSES),
    trigger: z.enum(['manual', 'scheduled']),
    startedAt: dateTime(),
    finishedAt: dateTime().nullable(),
    pages: z.number().int(),
    equipmentSeen: z.number().int(),
    matched: z.number().int(),
    unmatched: z.number().int(),
    readingsCreated: z.number().int(),
    readingsSkipped: z.number().int(),
    faultsOpened: z.number().int(),
    machineErrors: z.number().int().describe('Machines or values that could not be read (the run went on)'),
    machineErrorSamples: z.array(z.string()).describe('The first few machine errors, for diagnosis'),
    error: z.string().nullable().describe('Why the run failed'),
  })
  .meta({ id: 'TelematicsRun' });

export const Equipment = z
  .object({
    equipmentKey: z.string(),
    pin: z.string().nullable(),
    serialNumber: z.string().nullable(),
    equipmentId: z.string().nullable(),
    oemName: z.string().nullable(),
    model: z.string().nullable(),
    assetId: z.string().nullable(),
    linkMode: z
      .enum(['auto', 'manual', 'none'])
      .nullable()
      .describe('auto: matched by PIN or serial; manual: linked by PUT; none: unlinked by PUT (not matched again)'),
    lastSeenAt: dateTime(),
  })
  .meta({ id: 'TelematicsEquipment' });

const timed = <T extends z.ZodType>(value: T) => z.object({ value, at: dateTime() }).nullable();

export const AssetTelematics = z
  .object({
    connectionId: z.string(),
    equipmentKey: z.string(),
    lastSeenAt: dateTime(),
    location: z.object({ lat: z.number(), lng: z.number(), at: dateTime() }).nullable(),
    operatingHours: timed(z.number()),
    idleHours: timed(z.number()),
    odometer: z.object({ value: z.number(), unit: z.string(), at: dateTime() }).nullable(),
    fuelUsed: z.object({ value: z.number(), unit: z.string().nullable(), at: dateTime() }).nullable(),
    fuelRemainingPercent: timed(z.number()),
    defRemainingPercent: timed(z.number()),
    engineRunning: timed(z.boolean()),
    nearestYard: z
      .object({ yardId: z.string(), name: z.string(), distanceMeters: z.number() })
      .nullable()
      .describe("The organisation's yard with coordinates nearest the machine's last position"),
  })
  .meta({ id: 'AssetTelematics' });

export const CreateConnectionResponse = z.object({ ok: z.literal(true), connectionId: z.string() });
export const ConnectionResponse = z.object({ ok: z.literal(true), connection: Connection });
export const ListConnectionsResponse = z.object({
  ok: z.literal(true),
  connections: z.array(Connection),
  nextCursor: z.string().nullable(),
});
export const DeleteConnectionResponse = z.object({ ok: z.literal(true), connectionId: z.string() });
export const SyncResponse = z.object({
  ok: z.literal(true),
  runId: z.string().describe('The run started, or the one already running'),
});
export const ListRunsResponse = z.object({
  ok: z.literal(true),
  runs: z.array(Run),
  nextCursor: z.string().nullable(),
});
export const ListEquipmentResponse = z.object({
  ok: z.literal(true),
  equipment: z.array(Equipment),
  nextCursor: z.string().nullable(),
});
export const EquipmentResponse = z.object({ ok: z.literal(true), equipment: Equipment });
export const AssetTelematicsResponse = z.object({ ok: z.literal(true), telematics: AssetTelematics });

export function toAuthView(c: TelematicsConnection): z.input<typeof AuthView> {
  switch (c.authType) {
    case 'oauth2-client-credentials':
      return { type: c.authType, tokenUrl: c.authTokenUrl ?? '', clientId: c.authClientId ?? '', scope: c.authScope };
    case 'basic':
      return { type: c.authType, username: c.authUsername ?? '' };
    default:
      return { type: c.authType as 'bearer' | 'none' };
  }
}

export function toConnection(c: TelematicsConnection): z.input<typeof Connection> {
  return {
    connectionId: c.id,
    name: c.name,
    standard: c.standard as 'iso-15143-3',
    fleetUrl: c.fleetUrl,
    auth: toAuthView(c),
    pollMinutes: c.pollMinutes,
    enabled: c.enabled,
    status: connectionStatus(c),
    lastRunAt: iso(c.lastRunAt),
    lastSuccessAt: iso(c.lastSuccessAt),
    lastError: c.lastError,
    nextRunAt: c.enabled ? iso(c.nextRunAt) : null,
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  };
}

export function toRun(r: TelematicsRun): z.input<typeof Run> {
  return {
    runId: r.id,
    status: r.status as 'RUNNING',
    trigger: r.trigger as 'manual',
    startedAt: r.startedAt.toISOString(),
    finishedAt: iso(r.finishedAt),
    pages: r.pages,
    equipmentSeen: r.equipmentSeen,
    matched: r.matched,
    unmatched: r.unmatched,
    readingsCreated: r.readingsCreated,
    readingsSkipped: r.readingsSkipped,
    faultsOpened: r.faultsOpened,
    machineErrors: r.machineErrors,
    machineErrorSamples: Array.isArray(r.errorSamples) ? (r.errorSamples as string[]) : [],
    error: r.error,
  };
}

export function toEquipment(e: TelematicsEquipment): z.input<typeof Equipment> {
  return {
    equipmentKey: e.equipmentKey,
    pin: e.pin,
    serialNumber: e.serialNumber,
    equipmentId: e.equipmentId,
    oemName: e.oemName,
    model: e.model,
    assetId: e.assetId,
    linkMode: e.linkMode as 'auto' | null,
    lastSeenAt: e.lastSeenAt.toISOString(),
  };
}

const at = (d: Date | null) => d?.toISOString() ?? '';
export function toAssetTelematics(
  e: TelematicsEquipment,
  nearestYard: { yardId: string; name: string; distanceMeters: number } | null,
): z.input<typeof AssetTelematics> {
  const t = <T>(value: T | null, when: Date | null) => (value === null || !when ? null : { value, at: at(when) });
  return {
    connectionId: e.connectionId,
    equipmentKey: e.equipmentKey,
    lastSeenAt: e.lastSeenAt.toISOString(),
    location:
      e.lat !== null && e.lng !== null && e.locationAt ? { lat: e.lat, lng: e.lng, at: at(e.locationAt) } : null,
    operatingHours: t(e.operatingHours, e.operatingHoursAt),
    idleHours: t(e.idleHours, e.idleHoursAt),
    odometer:
      e.odometer !== null && e.odometerAt
        ? { value: e.odometer, unit: e.odometerUnit ?? 'km', at: at(e.odometerAt) }
        : null,
    fuelUsed:
      e.fuelUsed !== null && e.fuelUsedAt ? { value: e.fuelUsed, unit: e.fuelUsedUnit, at: at(e.fuelUsedAt) } : null,
    fuelRemainingPercent: t(e.fuelRemainingPercent, e.fuelRemainingAt),
    defRemainingPercent: t(e.defRemainingPercent, e.defRemainingAt),
    engineRunning: t(e.engineRunning, e.engineRunningAt),
    nearestYard,
  };
}
