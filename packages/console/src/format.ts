/**
 * Numbers, shares and dates as the console writes them. Counts are plain digits with no thousands
 * separator, so the figures a test or a screen reader reads are the integers the API returned.
 */

export function count(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return "–";
  return String(Math.round(n));
}

/** A share of a whole, e.g. 0.1234 → "12.3%"; "–" when there is no whole. */
export function percent(part: number, whole: number, digits = 1): string {
  if (!whole) return "–";
  return rate(part / whole, digits);
}

/** A rate in [0, 1] as a percentage, e.g. 0.025 → "2.5%". */
export function rate(r: number | null | undefined, digits = 1): string {
  if (r === null || r === undefined || !Number.isFinite(r)) return "–";
  return `${(r * 100).toFixed(digits)}%`;
}

/** A probability or score, e.g. 0.3127 → "0.313". */
export function decimal(x: number | null | undefined, digits = 3): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return "–";
  return x.toFixed(digits);
}

/**
 * A cost weight rounded as the console shows it: two decimals, and three significant digits below 1
 * (0.1, 0.102, 1, 2.5, 31.62). Always finer than one step of the what-if sliders (×10^0.01, 2.3%), so
 * each step lands on a weight of its own; two decimals alone would round 0.1 × 1.023 back to 0.1.
 */
export function roundWeight(x: number): number {
  if (x !== 0 && Math.abs(x) < 1) return Number(x.toPrecision(3));
  return Math.round(x * 100) / 100;
}

/** A cost weight as text, no trailing zeros (0.1, 0.102, 1, 2.5, 31.62). */
export function weight(x: number): string {
  if (!Number.isFinite(x)) return "–";
  return String(roundWeight(x));
}

/** A signed change, e.g. +12, −3, 0. */
export function delta(n: number): string {
  if (n > 0) return `+${n}`;
  if (n < 0) return `−${-n}`;
  return "0";
}

const pad = (n: number) => String(n).padStart(2, "0");

/** An ISO time in the browser's zone, to the minute or second: 2026-11-24 10:05. */
export function dateTime(iso: string | null | undefined, seconds = false): string {
  if (!iso) return "–";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const day = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}${seconds ? `:${pad(d.getSeconds())}` : ""}`;
  return `${day} ${time}`;
}

/** The value a datetime-local input takes for an ISO time (local zone, to the minute). */
export function toLocalInput(iso: string): string {
  const d = new Date(iso);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** A datetime-local input's value back to ISO (UTC); null when it is not a time. */
export function fromLocalInput(value: string): string | null {
  if (!value) return null;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

/** The zone the console shows times in, e.g. "UTC+01:00". */
export function zoneLabel(): string {
  const offset = -new Date().getTimezoneOffset();
  const sign = offset >= 0 ? "+" : "−";
  const abs = Math.abs(offset);
  return `UTC${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** Words for a vocabulary value: log_only → "log only". */
export function words(value: string): string {
  return value.replace(/_/g, " ");
}

/**
 * An action as the console shows it, everywhere: the name the tenant's app sends, as it is
 * (api_key stays api_key), since that is what a filter or a query takes.
 */
export function actionLabel(action: string): string {
  return action;
}
