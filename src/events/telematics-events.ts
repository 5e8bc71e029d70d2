import { z } from 'zod';

/** Telematics: a connection's feed stopped coming in (three failed runs in a row), and came back. */
const id = z.string();
const at = z.iso.datetime({ offset: true });

export const telematicsEvents = {
  'telematics_connection.failing': {
    summary:
      'A telematics connection failed 3 runs in a row (once per failing streak): its readings, positions and faults are not coming in.',
    data: z.object({
      connectionId: id,
      name: z.string(),
      consecutiveFailures: z.number().int(),
      lastError: z.string().nullable(),
      lastSuccessAt: at.nullable(),
      at,
    }),
  },
  'telematics_connection.recovered': {
    summary: 'A telematics connection that was reported failing completed a run again.',
    data: z.object({ connectionId: id, name: z.string(), failedRuns: z.number().int(), at }),
  },
} as const;
