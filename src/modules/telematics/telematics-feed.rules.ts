// The ISO 15143-3 (AEMP 2.0) snapshot as providers really serve it, parsed from XML or JSON into plain objects,
// turned into one normalised shape: names matched without regard to case, placeholders read as absent values,
// times taken from a `datetime` attribute or child element. Pure: no I/O.

export interface Timed<T> {
  value: T;
  at: Date;
}

export interface FeedFault {
  code: string;
  description: string | null;
  severity: string | null;
  source: string | null;
  at: Date | null;
}

export interface FeedEquipment {
  /** PIN, else OEMName:SerialNumber, else EquipmentID; null when the machine names none of them. */
  key: string | null;
  pin: string | null;
  serialNumber: string | null;
  equipmentId: string | null;
  oemName: string | null;
  model: string | null;
  location: Timed<{ lat: number; lng: number }> | null;
  operatingHours: Timed<number> | null;
  idleHours: Timed<number> | null;
  odometer: Timed<{ value: number; unit: string }> | null;
  fuelUsed: Timed<{ value: number; unit: string | null }> | null;
  fuelRemainingPercent: Timed<number> | null;
  defRemainingPercent: Timed<number> | null;
  engineRunning: Timed<boolean> | null;
  faults: FeedFault[];
  /** Values of this machine that could not be read (non-numeric, negative, unknown unit): counted, not fatal. */
  errors: string[];
}

export interface FeedPage {
  equipment: FeedEquipment[];
  links: { rel: string; href: string }[];
  next: string | null;
}

type Node = Record<string, unknown>;

const PLACEHOLDERS = new Set(['', 'missing', 'n/a', 'na', 'null', 'none', 'unknown', '-']);
const NO_TIME = /^0001-01-01/;
const NUMBER = /^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/;

const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v);
export const asArray = (v: unknown): unknown[] => (v === undefined || v === null ? [] : Array.isArray(v) ? v : [v]);

/** The value of the first key of `node` equal to `name` without regard to case (`Links`, `links`, `LINKS`). */
export function pick(node: unknown, name: string): unknown {
  if (!isNode(node)) return undefined;
  if (name in node) return node[name];
  const lower = name.toLowerCase();
  for (const key of Object.keys(node)) if (key.toLowerCase() === lower) return node[key];
  return undefined;
}

/** Longest header value kept (a PIN, serial number, model…); the machine key is cut at the same length. */
const MAX_TEXT = 300;

/**
 * Text of a leaf (string, number, boolean or an XML element with text), or null for a placeholder. A leaf is
 * looked for a few levels down at most: a hostile document nests values as deep as its size allows.
 */
export function text(v: unknown, depth = 0): string | null {
  if (depth > 3) return null;
  if (isNode(v)) return text(v['#text'], depth + 1);
  if (Array.isArray(v)) return v.length ? text(v[0], depth + 1) : null;
  if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') return null;
  const s = String(v).trim();
  return PLACEHOLDERS.has(s.toLowerCase()) ? null : s.slice(0, MAX_TEXT);
}

/** An ISO time, or null when absent, a placeholder (0001-01-01…) or unreadable. */
export function time(v: unknown): Date | null {
  const s = text(v);
  if (s === null || NO_TIME.test(s)) return null;
  const d = new Date(s);
  return Number.isNaN(d.getTime()) ? null : d;
}

type Num = { ok: true; value: number | null } | { ok: false };
/** A number of the feed: null when absent, not ok when present but not a finite number. */
function num(v: unknown): Num {
  if (typeof v === 'number') return Number.isFinite(v) ? { ok: true, value: v } : { ok: false };
  const s = text(v);
  if (s === null) return { ok: true, value: null };
  const value = NUMBER.test(s) ? Number(s) : NaN;
  // 1e400 is written like a number but reads as Infinity, which no meter can be above.
  return Number.isFinite(value) ? { ok: true, value } : { ok: false };
}

function bool(v: unknown): boolean | null {
  const s = text(v)?.toLowerCase();
  if (s === 'true' || s === '1' || s === 'yes' || s === 'on') return true;
  if (s === 'false' || s === '0' || s === 'no' || s === 'off') return false;
  return null;
}

/** Kilometres or miles from the feed's OdometerUnits; absent reads as kilometres (the standard's unit). */
export function distanceUnit(raw: string | null): 'km' | 'mi' | null {
  if (raw === null) return 'km';
  const u = raw.toLowerCase().replace(/[\s.]/g, '');
  if (['km', 'kms', 'kilometre', 'kilometres', 'kilometer', 'kilometers'].includes(u)) return 'km';
  if (['mi', 'mile', 'miles'].includes(u)) return 'mi';
  return null;
}

/** The page's Fleet: a `Fleet` root (XML, some JSON) or the document itself (JSON without the wrapper). */
export function fleetOf(doc: unknown): Node | null {
  const fleet = pick(doc, 'Fleet');
  if (isNode(fleet)) return fleet;
  if (fleet === '' || fleet === null) return {};
  if (isNode(doc) && (pick(doc, 'Equipment') !== undefined || pick(doc, 'Links') !== undefined)) return doc;
  return null;
}

/** The page: links, next link, and each machine normalised. `doc` is a parsed XML or JSON document. */
export function normalisePage(doc: unknown): FeedPage | null {
  const fleet = fleetOf(doc);
  if (!fleet) return null;
  const snapshotAt = time(pick(fleet, 'snapshotTime'));
  const links = asArray(pick(fleet, 'Links'))
    .map((l) => ({ rel: text(pick(l, 'rel'))?.toLowerCase() ?? '', href: text(pick(l, 'href')) ?? '' }))
    .filter((l) => l.rel && l.href);
  const next = links.find((l) => l.rel === 'next')?.href ?? null;
  const equipment = asArray(pick(fleet, 'Equipment')).map((e) => normaliseEquipment(e, snapshotAt));
  return { equipment, links, next };
}

function stamp(node: unknown, fallback: Date | null): Date | null {
  return time(pick(node, 'datetime')) ?? fallback;
}

function meter(node: unknown, field: string, label: string, errors: string[], fallback: Date | null) {
  if (node === undefined) return null;
  const n = num(pick(node, field));
  if (!n.ok) {
    errors.push(`${label} is not a number`);
    return null;
  }
  if (n.value === null) return null;
  if (n.value < 0) {
    errors.push(`${label} is negative`);
    return null;
  }
  const at = stamp(node, fallback);
  if (!at) {
    errors.push(`${label} has no datetime`);
    return null;
  }
  return { value: n.value, at };
}

function percent(node: unknown, label: string, errors: string[], fallback: Date | null): Timed<number> | null {
  const m = meter(node, 'Percent', label, errors, fallback);
  return m && m.value <= 100 ? m : null;
}

export function normaliseEquipment(raw: unknown, snapshotAt: Date | null = null): FeedEquipment {
  const header = pick(raw, 'EquipmentHeader');
  const pin = text(pick(header, 'PIN'));
  const serialNumber = text(pick(header, 'SerialNumber'));
  const equipmentId = text(pick(header, 'EquipmentID'));
  const oemName = text(pick(header, 'OEMName'));
  const errors: string[] = [];
  const key = pin ?? (oemName && serialNumber ? `${oemName}:${serialNumber}` : (equipmentId ?? null));

  let location: FeedEquipment['location'] = null;
  const loc = pick(raw, 'Location');
  if (loc !== undefined) {
    const lat = num(pick(loc, 'Latitude'));
    const lng = num(pick(loc, 'Longitude'));
    const at = stamp(loc, snapshotAt);
    if (!lat.ok || !lng.ok) errors.push('Location is not a pair of numbers');
    else if (lat.value !== null && lng.value !== null && at && !(lat.value === 0 && lng.value === 0)) {
      if (Math.abs(lat.value) > 90 || Math.abs(lng.value) > 180) errors.push('Location is out of range');
      else location = { value: { lat: lat.value, lng: lng.value }, at };
    }
  }

  const hours = pick(raw, 'CumulativeOperatingHours');
  const operatingHours = meter(hours, 'Hour', 'CumulativeOperatingHours', errors, snapshotAt);
  const idleHours = meter(pick(raw, 'CumulativeIdleHours'), 'Hour', 'CumulativeIdleHours', errors, snapshotAt);

  let odometer: FeedEquipment['odometer'] = null;
  const distance = pick(raw, 'Distance');
  const odo = meter(distance, 'Odometer', 'Distance', errors, snapshotAt);
  if (odo) {
    const unit = distanceUnit(text(pick(distance, 'OdometerUnits')));
    if (unit) odometer = { value: { value: odo.value, unit }, at: odo.at };
    else errors.push('Distance has an unknown OdometerUnits');
  }

  const fuelNode = pick(raw, 'FuelUsed');
  const fuel = meter(fuelNode, 'FuelConsumed', 'FuelUsed', errors, snapshotAt);
  const fuelUsed = fuel ? { value: { value: fuel.value, unit: text(pick(fuelNode, 'FuelUnits')) }, at: fuel.at } : null;

  let engineRunning: FeedEquipment['engineRunning'] = null;
  const engine = pick(raw, 'EngineStatus');
  const running = bool(pick(engine, 'Running'));
  const engineAt = stamp(engine, snapshotAt);
  if (running !== null && engineAt) engineRunning = { value: running, at: engineAt };

  const faultNodes = [
    ...asArray(pick(raw, 'FaultCode')),
    ...asArray(pick(raw, 'FaultCodes')).flatMap((w) => {
      const inner = pick(w, 'FaultCode');
      return inner === undefined ? [w] : asArray(inner);
    }),
  ];
  const faults: FeedFault[] = [];
  for (const f of faultNodes) {
    const code = text(pick(f, 'CodeIdentifier'));
    if (!code) continue;
    faults.push({
      code: code.slice(0, 200),
      description: text(pick(f, 'CodeDescription'))?.slice(0, 500) ?? null,
      severity: text(pick(f, 'CodeSeverity')),
      source: text(pick(f, 'CodeSource')),
      // Only the fault's own time: the snapshot's moves on every poll, and would reopen a resolved fault each time.
      at: stamp(f, null),
    });
  }

  return {
    key: key?.slice(0, MAX_TEXT) ?? null,
    pin,
    serialNumber,
    equipmentId,
    oemName,
    model: text(pick(header, 'Model')),
    location,
    operatingHours,
    idleHours,
    odometer,
    fuelUsed,
    fuelRemainingPercent: percent(pick(raw, 'FuelRemaining'), 'FuelRemaining', errors, snapshotAt),
    defRemainingPercent: percent(pick(raw, 'DEFRemaining'), 'DEFRemaining', errors, snapshotAt),
    engineRunning,
    faults,
    errors,
  };
}
