import { describe, expect, it } from 'vitest';
import { parseFeedPage } from '../../../src/modules/telematics/telematics-parse.adapter.ts';
import {
  convertDistance,
  decideReading,
  distanceMeters,
  faultSeverity,
  matchAsset,
  matchIndex,
} from '../../../src/modules/telematics/telematics.rules.ts';
import { fixture } from '../../helpers/telematics/fake-provider.ts';

const BASE = 'https://fleet.example.com';

describe('ISO 15143-3 pages as providers serve them', () => {
  it('gives a fault without a time of its own no time, whatever the snapshot time (a resolved fault stays resolved)', () => {
    const page = (snapshot: string) =>
      parseFeedPage(
        JSON.stringify({
          snapshotTime: snapshot,
          Equipment: [
            {
              EquipmentHeader: { PIN: 'PIN-FAULT-1', OEMName: 'CAT', SerialNumber: 'S1' },
              FaultCode: [{ CodeIdentifier: 'E1', CodeSeverity: 'high' }],
            },
          ],
        }),
        'application/json',
      ).equipment[0].faults[0];
    expect(page('2026-11-27T10:00:00Z').at).toBeNull();
    expect(page('2026-11-27T10:15:00Z').at).toBeNull();
  });

  it('reads the ISO namespace page: header, every element with its datetime attribute, faults, links', () => {
    const page = parseFeedPage(fixture('iso-fleet-page-1.xml', BASE), 'application/xml');
    expect(page.next).toBe(`${BASE}/aemp/Fleet/2`);
    const [cat, dozer] = page.equipment;
    expect(cat).toMatchObject({
      key: 'CAT0320GCZBK01234',
      oemName: 'CAT',
      model: '320 GC',
      location: { value: { lat: 51.5079, lng: -0.1281 }, at: new Date('2026-11-20T05:40:00Z') },
      operatingHours: { value: 1245.5 },
      idleHours: { value: 310.2 },
      fuelUsed: { value: { value: 18450, unit: 'litre' } },
      fuelRemainingPercent: { value: 62 },
      defRemainingPercent: { value: 80 },
      engineRunning: { value: false },
      errors: [],
    });
    expect(cat.faults.map((f) => [f.code, faultSeverity(f)])).toEqual([
      ['E360-2', 'RED'],
      ['E096-1', 'YELLOW'],
      ['I001', null],
    ]);
    // PIN "missing" is a placeholder: the key falls back to OEMName:SerialNumber.
    // An N/A position and an empty percent are absent values.
    expect(dozer).toMatchObject({ key: 'CAT:WDN00450', pin: null, location: null, fuelRemainingPercent: null });
  });

  it('reads the JCMA namespace with datetime child elements and 0001-01-01 placeholders', () => {
    const page = parseFeedPage(fixture('jcma-fleet.xml', BASE), 'text/xml');
    expect(page.equipment.map((e) => e.key)).toEqual(['190502863', '190502580']);
    expect(page.equipment[1]).toMatchObject({
      operatingHours: { value: 233.7, at: new Date('2026-11-19T11:08:34Z') },
      engineRunning: { value: true },
      fuelRemainingPercent: null,
      errors: [],
    });
    expect(page.next).toBe(`${BASE}/Telematics/Fleet/0`);
  });

  it('reads JSON whatever the key case, and counts non-numeric and negative hours as machine errors', () => {
    const page = parseFeedPage(fixture('fleet-json-mixed-case.json', BASE), 'application/json');
    expect(page.next).toBeNull();
    expect(page.links).toHaveLength(2);
    const [volvo, noKey, negative] = page.equipment;
    expect(volvo).toMatchObject({ key: 'VCEC220EV00311', operatingHours: { value: 5021.3 } });
    expect(faultSeverity(volvo.faults[0])).toBe('RED');
    expect(noKey).toMatchObject({ key: 'VCE-A30-02', operatingHours: null });
    expect(noKey.errors).toEqual(['CumulativeOperatingHours is not a number']);
    expect(negative.errors).toEqual(['CumulativeOperatingHours is negative']);
  });

  it.each([
    [
      'an entity declaration',
      '<?xml version="1.0"?><!DOCTYPE Fleet [<!ENTITY x "y">]><Fleet>&x;</Fleet>',
      /DTD or entities/,
    ],
    ['an external entity', '<!DOCTYPE Fleet SYSTEM "file:///etc/passwd"><Fleet/>', /DTD or entities/],
    ['malformed XML', '<Fleet><Equipment></Fleet>', /malformed XML/],
    ['malformed JSON', '{"Equipment": [', /malformed JSON/],
    ['an HTML login page', '<!DOCTYPE html><html><body><form>Sign in</form></body></html>', /HTML page/],
    ['text', 'Service Unavailable', /neither XML nor JSON/],
    ['another XML document', '<rss><channel/></rss>', /not an ISO 15143-3 document/],
  ])('refuses %s with a clear error', (_, body, message) => {
    expect(() => parseFeedPage(body, null)).toThrow(message);
  });

  const machine = '<Equipment><EquipmentHeader><PIN>CMT-1</PIN></EquipmentHeader></Equipment>';
  it.each([
    ['a comment', `<?xml version="1.0"?><!-- <!DOCTYPE Fleet [<!ENTITY x "y">]> --><Fleet>${machine}</Fleet>`],
    ['a comment inside the root', `<Fleet><!--<!ENTITY x SYSTEM "file:///etc/passwd">-->${machine}</Fleet>`],
    ['a CDATA section', `<Fleet>${machine}<Note><![CDATA[<!DOCTYPE Fleet>]]></Note></Fleet>`],
    ['a processing instruction', `<?xml version="1.0"?><?note <!DOCTYPE Fleet> ?><Fleet>${machine}</Fleet>`],
  ])('reads a page with a declaration only inside %s', (_, body) => {
    expect(parseFeedPage(body, 'application/xml').equipment.map((e) => e.key)).toEqual(['CMT-1']);
  });

  it.each([
    ['after a comment', `<!-- a note --><!DOCTYPE Fleet [<!ENTITY x "y">]><Fleet>&x;</Fleet>`],
    ['after a CDATA-looking comment', `<!-- <![CDATA[ --><!DOCTYPE Fleet SYSTEM "file:///etc/passwd"><Fleet/>`],
    ['after a processing instruction', `<?xml version="1.0"?><?pi x?><!DOCTYPE Fleet><Fleet/>`],
    ['inside the root', `<Fleet><!ENTITY x "y">${machine}</Fleet>`],
    ['in a comment that never ends', `<!-- <!DOCTYPE Fleet [<!ENTITY x "y">]><Fleet>&x;</Fleet>`],
  ])('still refuses a declaration %s', (_, body) => {
    expect(() => parseFeedPage(body, null)).toThrow(/DTD or entities/);
  });

  it('refuses an HTML answer by its content type', () => {
    expect(() => parseFeedPage('<Fleet/>', 'text/html; charset=utf-8')).toThrow(/HTML page/);
  });
});

describe('telematics rules', () => {
  it('matches by PIN (vin or serial), else serial, trimmed and case-insensitive, only when exactly one asset matches', () => {
    const index = matchIndex([
      { id: 'a', vin: ' cat0320gczbk01234 ', serial: null },
      { id: 'b', vin: null, serial: 'WDN00450' },
      { id: 'c', vin: null, serial: 'DUP' },
      { id: 'd', vin: 'DUP', serial: null },
    ]);
    expect(matchAsset({ pin: 'CAT0320GCZBK01234', serialNumber: null }, index)).toBe('a');
    expect(matchAsset({ pin: null, serialNumber: 'wdn00450' }, index)).toBe('b');
    expect(matchAsset({ pin: 'DUP', serialNumber: null }, index)).toBeNull();
    expect(matchAsset({ pin: 'NOPE', serialNumber: 'NOPE' }, index)).toBeNull();
  });

  it('converts kilometres and miles to the asset unit', () => {
    expect(convertDistance(16093.44, 'km', 'mi')).toBe(10000);
    expect(convertDistance(10, 'mi', 'km')).toBe(16.093);
    expect(convertDistance(5, 'km', 'km')).toBe(5);
  });

  it('skips a value not above the latest reading or not later', () => {
    const asset = {
      meterType: 'HOURS' as const,
      meterUnit: 'hrs',
      lastMeterReading: 100,
      lastMeterAt: new Date('2026-11-20T00:00:00Z'),
    };
    const at = new Date('2026-11-20T05:00:00Z');
    expect(decideReading(asset, { operatingHours: { value: 100, at }, odometer: null })).toEqual({ kind: 'skip' });
    expect(decideReading(asset, { operatingHours: { value: 101, at: asset.lastMeterAt }, odometer: null })).toEqual({
      kind: 'skip',
    });
    expect(decideReading(asset, { operatingHours: { value: 101, at }, odometer: null })).toEqual({
      kind: 'record',
      reading: 101,
      at,
    });
    expect(
      decideReading({ ...asset, meterType: 'NONE' }, { operatingHours: { value: 101, at }, odometer: null }),
    ).toEqual({ kind: 'none' });
  });

  it('measures great-circle distances', () => {
    expect(distanceMeters({ lat: 51.5079, lng: -0.1281 }, { lat: 51.5079, lng: -0.1281 })).toBe(0);
    const london = distanceMeters({ lat: 51.5074, lng: -0.1278 }, { lat: 48.8566, lng: 2.3522 });
    expect(Math.round(london / 1000)).toBe(344);
  });
});
