/**
 * Timestamps read as text for the hottest lists: `utcText(column)` in SQL, `isoFromUtcText` on the row. The driver
 * would parse each timestamptz into a Date only for the mapper to format it back (toISOString): two costly steps
 * per date, a hundred per page. PostgreSQL writes the text anyway; in UTC (whatever the session's TimeZone) it
 * is ISO 8601 but for the separator and the zone, and the fraction PostgreSQL prints (up to microseconds,
 * trailing zeros dropped) is cut to milliseconds as a Date would cut it, so the output is toISOString's.
 */
export const utcText = (column: string) => `(${column} AT TIME ZONE 'UTC')::text`;

/** '2026-11-25 15:15:00.657123' (from utcText) -> '2026-11-25T15:15:00.657Z', as `new Date(...).toISOString()`. */
export function isoFromUtcText(text: string): string {
  // Years 1-9999 (all the API stores) print as four digits; anything else (BC, five digits) takes the slow way.
  if (text.length < 19 || text.charCodeAt(10) !== 32 || text.charCodeAt(4) !== 45) return slow(text);
  const fraction = text.length > 20 ? text.slice(20, 23).padEnd(3, '0') : '000';
  return `${text.slice(0, 10)}T${text.slice(11, 19)}.${fraction}Z`;
}

function slow(text: string): string {
  const d = new Date(`${text.replace(' ', 'T')}Z`);
  if (Number.isNaN(d.getTime())) throw new Error(`not a UTC timestamp: ${text}`);
  return d.toISOString();
}

/**
 * A timestamptz written by PostgreSQL exactly as `toISOString` writes it ('2026-11-25T15:15:00.657Z': milliseconds
 * cut, not rounded, as a Date cuts them; four-digit years, all the API stores), for a list whose rows go to the
 * response as they come from the driver: no string built per date in JavaScript.
 */
export const isoText = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
