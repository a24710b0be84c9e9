import type { Query } from "./api.js";

export const PRESETS = [
  { id: "24h", label: "Last 24 hours", ms: 24 * 3600_000 },
  { id: "7d", label: "Last 7 days", ms: 7 * 24 * 3600_000 },
  { id: "30d", label: "Last 30 days", ms: 30 * 24 * 3600_000 },
] as const;
export type Preset = (typeof PRESETS)[number]["id"] | "custom";
export type Bucket = "auto" | "hour" | "day";

/** The filters every page shares: one time range (resolved to instants when chosen) and an action. */
export interface Filters {
  preset: Preset;
  since: string;
  until: string;
  action: string;
  bucket: Bucket;
}

/** since/until for a preset, ending now (to the second, so the query is stable until refreshed). */
export function presetRange(preset: Preset, now = Date.now()): { since: string; until: string } | null {
  const found = PRESETS.find((p) => p.id === preset);
  if (!found) return null;
  const until = Math.floor(now / 1000) * 1000;
  return { since: new Date(until - found.ms).toISOString(), until: new Date(until).toISOString() };
}

export function initialFilters(now = Date.now()): Filters {
  const range = presetRange("7d", now) ?? { since: "", until: "" };
  return { preset: "7d", ...range, action: "", bucket: "auto" };
}

/** A preset range moved to now; a custom range as it is. */
export function refreshed(filters: Filters, now = Date.now()): Filters {
  const range = presetRange(filters.preset, now);
  return range ? { ...filters, ...range } : { ...filters };
}

/** The common query parameters (since, until, action) of the API. */
export function rangeQuery(filters: Filters): Query {
  return { since: filters.since, until: filters.until, action: filters.action.trim() || undefined };
}
