import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { type Bucket, type Filters, PRESETS, type Preset, presetRange, refreshed } from "../filters.js";
import { fromLocalInput, toLocalInput, zoneLabel } from "../format.js";

interface Props {
  filters: Filters;
  onChange(next: Filters): void;
  /** Show the hour/day choice (the decisions chart). */
  bucket?: boolean;
  /** Page-specific controls, after the shared ones. */
  children?: ComponentChildren;
}

/** The time range (a preset or two instants), the action and, where it applies, the bucket. */
export function FiltersBar({ filters, onChange, bucket, children }: Props) {
  // The action as typed; applied on change (blur), on Enter and with the button.
  const [action, setAction] = useState(filters.action);
  useEffect(() => setAction(filters.action), [filters.action]);
  const set = (patch: Partial<Filters>) => onChange({ ...filters, action: action.trim(), ...patch });
  const zone = zoneLabel();
  return (
    <form
      class="filters"
      aria-label="Filters"
      onSubmit={(e) => {
        e.preventDefault();
        onChange(refreshed({ ...filters, action: action.trim() }));
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
        <input
          id="f-action"
          type="text"
          placeholder="All actions"
          spellcheck={false}
          autoComplete="off"
          value={action}
          onInput={(e) => setAction(e.currentTarget.value)}
          onChange={(e) => set({ action: e.currentTarget.value.trim() })}
        />
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
