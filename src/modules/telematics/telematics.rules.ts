// Decisions over a feed's machines and the organisation's assets: matching, meter units, skips, fault severities,
// distances. Pure: no I/O.
import type { FeedEquipment, FeedFault } from './telematics-feed.rules.ts';

export interface MatchableAsset {
  id: string;
  vin: string | null;
  serial: string | null;
}

const norm = (s: string | null | undefined) => (s ?? '').trim().toLowerCase();

/**
 * The one asset a machine without a link matches: its PIN equals an asset's vin or serial, else its serial number
 * equals an asset's serial (trimmed, case-insensitive). Null when none or several match (a guess would feed the
 * wrong meter).
 */
export function matchAsset(
  machine: Pick<FeedEquipment, 'pin' | 'serialNumber'>,
  index: { byVinOrSerial: Map<string, string[]>; bySerial: Map<string, string[]> },
): string | null {
  const pin = norm(machine.pin);
  if (pin) {
    const ids = index.byVinOrSerial.get(pin);
    if (ids) return ids.length === 1 ? ids[0] : null;
  }
  const serial = norm(machine.serialNumber);
  if (serial) {
    const ids = index.bySerial.get(serial);
    if (ids) return ids.length === 1 ? ids[0] : null;
  }
  return null;
}

/** Lookup maps of the candidate assets: vin-or-serial (for PINs) and serial alone (one asset once per map key). */
export function matchIndex(assets: MatchableAsset[]) {
  const byVinOrSerial = new Map<string, string[]>();
  const bySerial = new Map<string, string[]>();
  const add = (map: Map<string, string[]>, key: string, id: string) => {
    if (!key) return;
    const ids = map.get(key);
    if (!ids) map.set(key, [id]);
    else if (!ids.includes(id)) ids.push(id);
  };
  for (const a of assets) {
    add(byVinOrSerial, norm(a.vin), a.id);
    add(byVinOrSerial, norm(a.serial), a.id);
    add(bySerial, norm(a.serial), a.id);
  }
  return { byVinOrSerial, bySerial };
}

/** The values a machine's header offers for matching (what to look assets up by). */
export function matchKeys(machines: Pick<FeedEquipment, 'pin' | 'serialNumber'>[]): string[] {
  const keys = new Set<string>();
  for (const m of machines) {
    if (norm(m.pin)) keys.add(norm(m.pin));
    if (norm(m.serialNumber)) keys.add(norm(m.serialNumber));
  }
  return [...keys];
}

const KM_PER_MILE = 1.609344;

/** The asset's odometer unit: kilometres when its meterUnit says so, miles otherwise (the API's default). */
export function assetDistanceUnit(meterUnit: string): 'km' | 'mi' {
  return /^(km|kms|kilomet(re|er)s?)$/i.test(meterUnit.trim()) ? 'km' : 'mi';
}

export function convertDistance(value: number, from: 'km' | 'mi', to: 'km' | 'mi'): number {
  if (from === to) return value;
  const converted = from === 'km' ? value / KM_PER_MILE : value * KM_PER_MILE;
  return Math.round(converted * 1000) / 1000;
}

export interface MeterState {
  meterType: 'HOURS' | 'ODOMETER' | 'NONE';
  meterUnit: string;
  lastMeterReading: number | null;
  lastMeterAt: Date | null;
}

export type ReadingDecision = { kind: 'none' } | { kind: 'skip' } | { kind: 'record'; reading: number; at: Date };

/**
 * What a machine's snapshot gives the asset's meter: HOURS assets take CumulativeOperatingHours, ODOMETER assets
 * Distance (converted to the asset's unit). A value not above the asset's latest reading, or not later, is a skip:
 * never stored, never routed to review, so polling an unchanged feed twice creates nothing.
 */
export function decideReading(asset: MeterState, machine: Pick<FeedEquipment, 'operatingHours' | 'odometer'>) {
  let value: number;
  let at: Date;
  if (asset.meterType === 'HOURS' && machine.operatingHours) {
    value = machine.operatingHours.value;
    at = machine.operatingHours.at;
  } else if (asset.meterType === 'ODOMETER' && machine.odometer) {
    const odo = machine.odometer.value;
    value = convertDistance(odo.value, odo.unit as 'km' | 'mi', assetDistanceUnit(asset.meterUnit));
    at = machine.odometer.at;
  } else return { kind: 'none' } as ReadingDecision;
  if (asset.lastMeterReading !== null && value <= asset.lastMeterReading) return { kind: 'skip' } as ReadingDecision;
  if (asset.lastMeterAt !== null && at.getTime() <= asset.lastMeterAt.getTime())
    return { kind: 'skip' } as ReadingDecision;
  return { kind: 'record', reading: value, at } as ReadingDecision;
}

/** high and critical open a RED flag, medium a YELLOW one; anything else opens none. */
export function faultSeverity(fault: Pick<FeedFault, 'severity'>): 'RED' | 'YELLOW' | null {
  const s = (fault.severity ?? '').trim().toLowerCase();
  if (s === 'high' || s === 'critical' || s === 'severe') return 'RED';
  if (s === 'medium' || s === 'moderate') return 'YELLOW';
  return null;
}

export const faultDedupeKey = (code: string) => `telematics-fault:${code}`;

export function faultNote(fault: FeedFault): string {
  const parts = [`Telematics fault ${fault.code}`];
  if (fault.description) parts.push(fault.description);
  if (fault.severity) parts.push(`severity ${fault.severity}`);
  if (fault.source) parts.push(`source ${fault.source}`);
  return parts.join(' — ').slice(0, 1000);
}

/** Great-circle distance in metres (haversine on a sphere of the Earth's mean radius). */
export function distanceMeters(a: { lat: number; lng: number }, b: { lat: number; lng: number }): number {
  const rad = Math.PI / 180;
  const dLat = (b.lat - a.lat) * rad;
  const dLng = (b.lng - a.lng) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLng / 2) ** 2;
  return Math.round(2 * 6_371_008.8 * Math.asin(Math.min(1, Math.sqrt(h))));
}

/** Connection status from its row: DISABLED, NEVER_RUN, FAILING (last run failed), OK. */
export function connectionStatus(c: { enabled: boolean; lastRunAt: Date | null; consecutiveFailures: number }) {
  if (!c.enabled) return 'DISABLED' as const;
  if (c.lastRunAt === null) return 'NEVER_RUN' as const;
  return c.consecutiveFailures > 0 ? ('FAILING' as const) : ('OK' as const);
}

/** After this many failed runs in a row the connection's organisation hears telematics_connection.failing. */
export const FAILING_AFTER = 3;
