// The built-in inspection forms an organisation can copy (POST /inspection-forms with {template}). A template is a
// starting point: the copy is the organisation's own form, versioned and editable like any other.
import type { InspectionItem } from './inspection-forms.schemas.ts';

export interface InspectionTemplate {
  id: string;
  name: string;
  description: string;
  assetClasses: ('on-road' | 'off-road' | 'trailer')[];
  outOfServiceOnCriticalFailure: boolean;
  items: InspectionItem[];
}

const check = (key: string, label: string, critical: boolean, extra: Partial<InspectionItem> = {}): InspectionItem => ({
  key,
  label,
  type: 'pass_fail',
  required: true,
  critical,
  photoRequiredOnFail: false,
  min: null,
  max: null,
  ...extra,
});

const meter = (key: string, label: string): InspectionItem => ({
  ...check(key, label, false),
  type: 'meter',
  // Optional so a driver whose odometer or hour meter cannot be read can still file the report.
  required: false,
});

/**
 * 49 CFR 396.11(a)(1): the parts and accessories a driver's vehicle inspection report covers. Trailer brake
 * connections and coupling devices apply only to combinations, so a straight truck may leave them unanswered.
 */
const DVIR_PRE_TRIP: InspectionTemplate = {
  id: 'dvir-pre-trip',
  name: 'Pre-trip DVIR (49 CFR 396.11)',
  description:
    'Driver vehicle inspection report: the parts and accessories of 49 CFR 396.11 plus the odometer. A failed ' +
    'critical item takes the vehicle out of service until a mechanic reviews the report.',
  assetClasses: ['on-road'],
  outOfServiceOnCriticalFailure: true,
  items: [
    check('service_brakes', 'Service brakes', true),
    check('trailer_brake_connections', 'Trailer brake connections', true, { required: false }),
    check('parking_brake', 'Parking brake', true),
    check('steering_mechanism', 'Steering mechanism', true),
    check('lighting_devices', 'Lighting devices and reflectors', true),
    check('tires', 'Tires', true),
    check('horn', 'Horn', false),
    check('windshield_wipers', 'Windshield wipers', false),
    check('rear_vision_mirrors', 'Rear vision mirrors', false),
    check('coupling_devices', 'Coupling devices', true, { required: false }),
    check('wheels_and_rims', 'Wheels and rims', true),
    check('emergency_equipment', 'Emergency equipment (triangles, fire extinguisher, fuses)', false),
    meter('odometer', 'Odometer'),
  ],
};

const DAILY_WALK_AROUND: InspectionTemplate = {
  id: 'daily-walk-around',
  name: 'Daily walk-around (off-road equipment)',
  description:
    'Operator walk-around before the shift: fluids, leaks, undercarriage, attachments, hydraulics, lights, ' +
    'ROPS and seat belt, fire extinguisher, the hour meter and a photo of the machine.',
  assetClasses: ['off-road'],
  outOfServiceOnCriticalFailure: true,
  items: [
    check('fluid_levels', 'Fluid levels (engine oil, coolant, hydraulic oil, fuel)', false),
    check('leaks', 'No leaks under or around the machine', false, { photoRequiredOnFail: true }),
    check('tracks_tires', 'Tracks or tires (tension, wear, damage)', true),
    check('attachments', 'Attachments and couplers (bucket, pins, locks)', true),
    check('hydraulics', 'Hydraulic hoses and cylinders', true, { photoRequiredOnFail: true }),
    check('lights', 'Lights, beacon and backup alarm', false),
    check('rops_seat_belt', 'ROPS and seat belt', true),
    check('fire_extinguisher', 'Fire extinguisher charged and in place', false),
    meter('hour_meter', 'Hour meter'),
    { ...check('machine_photo', 'Photo of the machine', false), type: 'photo', required: false },
  ],
};

export const INSPECTION_TEMPLATES: readonly InspectionTemplate[] = [DVIR_PRE_TRIP, DAILY_WALK_AROUND];

/** The template named by `id` ("dvir-pre-trip", also accepted as "dvir_pre_trip" or in capitals), or null. */
export function findTemplate(id: string): InspectionTemplate | null {
  const wanted = id.trim().toLowerCase().replace(/_/g, '-');
  return INSPECTION_TEMPLATES.find((t) => t.id === wanted) ?? null;
}
