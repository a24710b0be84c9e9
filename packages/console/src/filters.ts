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

/** The query parameters the shared filters take in a page's URL (each page owns its own). */
export const FILTER_PARAMS = ["range", "since", "until", "action", "bucket"] as const;

const isTime = (text: string | null): text is string => text !== null && !Number.isNaN(Date.parse(text));

/**
 * A page's filters from its URL: the range (a preset, with the instants it was resolved to, or a
 * custom range), the action and the bucket. What the URL leaves out takes its default, the last 7
 * days ending `now`.
 */
export function filtersFromParams(params: URLSearchParams, now = Date.now()): Filters {
  const filters = initialFilters(now);
  const range = params.get("range");
  const since = params.get("since");
  const until = params.get("until");
  if (range === "custom" || PRESETS.some((p) => p.id === range)) {
    filters.preset = range as Preset;
    if (isTime(since) && isTime(until)) Object.assign(filters, { since, until });
    else if (range !== "custom") Object.assign(filters, presetRange(range as Preset, now));
    else filters.preset = "7d";
  }
  filters.action = params.get("action")?.trim() ?? "";
  const bucket = params.get("bucket");
  if (bucket === "hour" || bucket === "day") filters.bucket = bucket;
  return filters;
}

/** The URL parameters of the filters (FILTER_PARAMS); defaults are left out. */
export function filterParams(filters: Filters): Record<string, string | undefined> {
  return {
    range: filters.preset,
    since: filters.since,
    until: filters.until,
    action: filters.action || undefined,
    bucket: filters.bucket === "auto" ? undefined : filters.bucket,
  };
}
