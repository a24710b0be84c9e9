import type { ComponentChildren } from "preact";
import { type Bucket, type Filters, PRESETS, type Preset, presetRange, refreshed } from "../filters.js";
import { actionLabel, fromLocalInput, toLocalInput, zoneLabel } from "../format.js";
import { useApi } from "../hooks.js";
import type { ActionList } from "../types.js";

interface Props {
  filters: Filters;
  onChange(next: Filters): void;
  /** Show the hour/day choice (the decisions chart). */
  bucket?: boolean;
  /** Page-specific controls, after the shared ones. */
  children?: ComponentChildren;
}

/**
 * The time range (a preset or two instants), the action and, where it applies, the bucket. The
 * action is chosen from the tenant's actions (GET /v1/stats/actions): a name that is not one of them
 * cannot be typed in and silently show nothing.
 */
export function FiltersBar({ filters, onChange, bucket, children }: Props) {
  const set = (patch: Partial<Filters>) => onChange({ ...filters, ...patch });
  const known = useApi<ActionList>("/v1/stats/actions").data?.actions ?? [];
  const actions = filters.action && !known.includes(filters.action) ? [filters.action, ...known] : known;
  const zone = zoneLabel();
  return (
    <form
      class="filters"
      aria-label="Filters"
      onSubmit={(e) => {
        e.preventDefault();
        onChange(refreshed(filters));
      }}
    >
      <div class="field">
        <label for="f-range">Time range</label>
        <select
          id="f-range"
          value={filters.preset}
          onChange={(e) => {
            const preset = e.currentTarget.value as Preset;
            set({ preset, ...(presetRange(preset) ?? {}) });
          }}
        >
          {PRESETS.map((p) => (
            <option value={p.id} key={p.id}>
              {p.label}
            </option>
          ))}
          <option value="custom">Custom range</option>
        </select>
      </div>
      <div class="field">
        <label for="f-since">From ({zone})</label>
        <input
          id="f-since"
          type="datetime-local"
          value={toLocalInput(filters.since)}
          onChange={(e) => {
            const since = fromLocalInput(e.currentTarget.value);
            if (since) set({ preset: "custom", since });
          }}
        />
      </div>
      <div class="field">
        <label for="f-until">To ({zone})</label>
        <input
          id="f-until"
          type="datetime-local"
          value={toLocalInput(filters.until)}
          onChange={(e) => {
            const until = fromLocalInput(e.currentTarget.value);
            if (until) set({ preset: "custom", until });
          }}
        />
      </div>
      <div class="field">
        <label for="f-action">Action</label>
        <select id="f-action" value={filters.action} onChange={(e) => set({ action: e.currentTarget.value })}>
          <option value="">All actions</option>
          {actions.map((a) => (
            <option value={a} key={a}>
              {known.includes(a) ? actionLabel(a) : `${actionLabel(a)} (no events)`}
            </option>
          ))}
        </select>
      </div>
      {bucket ? (
        <div class="field">
          <label for="f-bucket">Bucket</label>
          <select
            id="f-bucket"
            value={filters.bucket}
            onChange={(e) => set({ bucket: e.currentTarget.value as Bucket })}
          >
            <option value="auto">Automatic</option>
            <option value="hour">Hour</option>
            <option value="day">Day</option>
          </select>
        </div>
      ) : null}
      {children}
      <div class="field field-button">
        <button type="submit">{filters.preset === "custom" ? "Apply" : "Refresh"}</button>
      </div>
    </form>
  );
}
