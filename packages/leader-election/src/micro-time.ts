/**
 * Kubernetes `MicroTime`: the wire format of a Lease's `acquireTime` and `renewTime`.
 *
 * The API server decodes MicroTime with Go's layout `2006-01-02T15:04:05.000000Z07:00`, which demands
 * exactly six fractional digits: `Date.prototype.toISOString()` (three digits) is rejected, and
 * client-node's `V1MicroTime` only pads milliseconds. Times are therefore carried as integer
 * microseconds since the Unix epoch, which holds everything MicroTime can express without loss.
 */

/**
 * Microseconds since 1970-01-01T00:00:00Z. Exact for |value| <= 2^53 (years 1685 to 2255); further
 * out, a few microseconds of precision are lost, which leader election never depends on.
 */
export type EpochMicros = number;

const MICROS_PER_SECOND = 1_000_000;

/** A string that is not an RFC 3339 timestamp, or a time outside years 0000-9999. */
export class MicroTimeError extends RangeError {
  override readonly name = 'MicroTimeError';
}

/**
 * Formats as MicroTime: UTC, `Z`, exactly six fractional digits, e.g. `2026-11-22T05:20:01.123456Z`.
 * Fractions of a microsecond are truncated (Go truncates too).
 */
export function formatMicroTime(micros: EpochMicros): string {
  if (!Number.isFinite(micros)) throw new MicroTimeError(`not a time: ${micros}`);
  const whole = Math.floor(micros);
  const seconds = Math.floor(whole / MICROS_PER_SECOND);
  const fraction = whole - seconds * MICROS_PER_SECOND;
  const date = new Date(seconds * 1000);
  const year = date.getUTCFullYear();
  if (Number.isNaN(year) || year < 0 || year > 9999) {
    throw new MicroTimeError(
      `time ${micros} microseconds are outside the years 0000-9999 that RFC 3339 can express`,
    );
  }
  // toISOString is `YYYY-MM-DDTHH:mm:ss.sssZ` for years 0000-9999; keep the seconds, replace the rest.
  return `${date.toISOString().slice(0, 19)}.${String(fraction).padStart(6, '0')}Z`;
}

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/**
 * Parses an RFC 3339 timestamp into microseconds. Accepts what the API server sends (MicroTime, six
 * digits, `Z`) and, leniently, any fraction length (digits past microseconds are truncated) and
 * numeric offsets. Rejects anything else, including out-of-range fields like `2026-02-30`.
 */
export function parseMicroTime(text: string): EpochMicros {
  const match = RFC3339.exec(text);
  if (match === null) throw new MicroTimeError(`not an RFC 3339 timestamp: ${JSON.stringify(text)}`);
  const [, year, month, day, hour, minute, second, fraction = '', zulu, sign, offsetHours, offsetMinutes] =
    match;
  const fields = [year, month, day, hour, minute, second].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const [y, mo, d, h, mi, s] = fields;
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  date.setUTCHours(h, mi, s, 0);
  const rolledOver =
    date.getUTCFullYear() !== y ||
    date.getUTCMonth() !== mo - 1 ||
    date.getUTCDate() !== d ||
    date.getUTCHours() !== h ||
    date.getUTCMinutes() !== mi ||
    date.getUTCSeconds() !== s;
  if (rolledOver) throw new MicroTimeError(`field out of range in timestamp: ${JSON.stringify(text)}`);
  let offsetSeconds = 0;
  if (zulu === undefined) {
    const oh = Number(offsetHours);
    const om = Number(offsetMinutes);
    if (oh > 23 || om > 59)
      throw new MicroTimeError(`offset out of range in timestamp: ${JSON.stringify(text)}`);
    offsetSeconds = (sign === '-' ? -1 : 1) * (oh * 3600 + om * 60);
  }
  const micros = Number(fraction.padEnd(6, '0').slice(0, 6));
  return (date.getTime() / 1000 - offsetSeconds) * MICROS_PER_SECOND + micros;
}
