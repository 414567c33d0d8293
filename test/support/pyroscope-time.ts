// `from` / `until` parsing, ported from grafana/pyroscope
// pkg/og/util/attime/attime.go (Parse), returning Unix milliseconds.
// The unit of an all-digit value is chosen by its length: 13 digits are
// milliseconds, 16 microseconds, 19 nanoseconds, 8 may be YYYYMMDD, and any
// other length is seconds. Anything else is "now" plus an optional +/- offset
// like `now-1h` (the reference word itself is ignored by the server).

const INT64_MAX = 2n ** 63n - 1n;

function yyyymmdd(s: string): number | undefined {
  const year = Number(s.slice(0, 4));
  const month = Number(s.slice(4, 6));
  const day = Number(s.slice(6, 8));
  const ms = Date.UTC(year, month - 1, day);
  const d = new Date(ms);
  // Go's time.Parse("20060102") rejects impossible dates; the server then also requires year > 1900.
  const valid = d.getUTCFullYear() === year && d.getUTCMonth() === month - 1 && d.getUTCDate() === day;
  return valid && year > 1900 ? ms : undefined;
}

function unitMultiplierSeconds(unit: string): number {
  if (unit.startsWith('s')) return 1;
  if (unit.startsWith('mon') || unit.startsWith('M')) return 3600 * 24 * 30;
  if (unit.startsWith('min') || unit.startsWith('m')) return 60;
  if (unit.startsWith('h')) return 3600;
  if (unit.startsWith('d')) return 3600 * 24;
  if (unit.startsWith('w')) return 3600 * 24 * 7;
  if (unit.startsWith('y')) return 3600 * 24 * 365;
  return 0;
}

/**
 * parseTimeOffset: after the sign, leading digits are the amount and the whole
 * remainder is the unit (the Go loop's unit scan never stops at a later digit),
 * so `-1h30m` means one hour.
 */
function offsetMs(offset: string): number {
  if (offset === '') return 0;
  let sign = 1;
  let rest = offset;
  if (rest.startsWith('-')) {
    sign = -1;
    rest = rest.slice(1);
  } else if (rest.startsWith('+')) {
    rest = rest.slice(1);
  }
  const digits = /^\d*/.exec(rest)?.[0] ?? '';
  const amount = digits === '' ? 0 : Number(digits);
  return sign * amount * unitMultiplierSeconds(rest.slice(digits.length)) * 1000;
}

export function parseAtTime(input: string, nowMs: number = Date.now()): number {
  const s = input.trim().replaceAll('_', '').replaceAll(',', '').replaceAll(' ', '');
  if (/^\d+$/.test(s)) {
    if (s.length === 8) {
      const date = yyyymmdd(s);
      if (date !== undefined) return date;
    }
    // strconv.Atoi fails (→ 0) beyond int64.
    const big = BigInt(s);
    const v = big > INT64_MAX ? 0n : big;
    switch (s.length) {
      case 13:
        return Number(v);
      case 16:
        return Number(v / 1000n);
      case 19:
        return Number(v / 1_000_000n);
      default:
        return Number(v * 1000n);
    }
  }
  const plus = s.indexOf('+');
  const minus = s.indexOf('-');
  const at = plus !== -1 ? plus : minus;
  return nowMs + offsetMs(at === -1 ? '' : s.slice(at));
}
