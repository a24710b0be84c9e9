import { useEffect, useState } from "preact/hooks";
import { POLICY_FILE, policySetCommand } from "../cliCommands.js";
import { DataTable } from "../components/DataTable.js";
import { FiltersBar } from "../components/FiltersBar.js";
import { Json } from "../components/Json.js";
import { PageHeading } from "../components/PageHeading.js";
import { RangeNote } from "../components/RangeNote.js";
import { Status } from "../components/Status.js";
import { Tile } from "../components/Tile.js";
import { type Filters, rangeQuery } from "../filters.js";
import { count, decimal, delta, roundWeight, weight } from "../format.js";
import { useApi, useDebounced } from "../hooks.js";
import { type Costs, DECISIONS, type WhatIfStats } from "../types.js";

interface Props {
  filters: Filters;
  onFilters(f: Filters): void;
  tenantId: string;
}

const MIN = 0.1;
const MAX = 100;

const COST_FIELDS: { key: keyof Costs; label: string; help: string }[] = [
  { key: "falseAllow", label: "Cost of a false allow", help: "letting abuse through" },
  { key: "falseChallenge", label: "Cost of a false challenge", help: "friction on a good user" },
  { key: "falseDeny", label: "Cost of a false deny", help: "turning a good user away" },
];

/** A weight from the slider's position (log10 of the weight), rounded as it is shown (roundWeight). */
const fromSlider = (position: number) => roundWeight(10 ** position);
const clamp = (v: number) => Math.min(MAX, Math.max(MIN, v));

/** Replays the period's recorded risk estimates under other decision costs. Shows, never applies. */
export function WhatIfPage({ filters, onFilters, tenantId }: Props) {
  // Null until the first answer: the replay starts from the weights verify uses today (currentCosts).
  const [costs, setCosts] = useState<Costs | null>(null);
  const settled = useDebounced(costs, 300);
  const query = { ...rangeQuery(filters), ...(settled ?? {}) };
  const stats = useApi<WhatIfStats>("/v1/stats/what-if", query);
  const s = stats.data;
  const current = s?.currentCosts;
  useEffect(() => {
    if (costs === null && current) setCosts(current);
  }, [costs, current]);
  const pending = stats.loading || settled !== costs;
  const shown = costs ?? current;

  return (
    <>
      <PageHeading title="What-if">
        How the same traffic would have been decided with other decision costs. Warden replays the recorded
        risk estimates of the range; events decided by a tenant rule, an honoured clear or a degradation keep
        their decision.
      </PageHeading>
      <FiltersBar filters={filters} onChange={onFilters} />

      <form class="costs" aria-labelledby="h-costs" onSubmit={(e) => e.preventDefault()}>
        <h2 id="h-costs">Decision costs</h2>
        <p class="muted">
          Relative weights of each kind of mistake (0.1 to 100, logarithmic sliders). They start at the
          weights verify uses today for requests that send none
          {current
            ? ` (${weight(current.falseAllow)}, ${weight(current.falseChallenge)}, ${weight(current.falseDeny)})`
            : ""}
          .
        </p>
        {shown &&
          COST_FIELDS.map((f) => (
            <CostControl
              key={f.key}
              id={f.key}
              label={f.label}
              help={f.help}
              value={shown[f.key]}
              onChange={(v) => setCosts((c) => ({ ...(c ?? shown), [f.key]: v }))}
            />
          ))}
        {current && (
          <button type="button" class="secondary" onClick={() => setCosts(current)}>
            Reset to the current weights
          </button>
        )}
      </form>

      <Status loading={pending} errors={[stats.error]} />

      {s ? (
        <section
          class={pending ? "stale results" : "results"}
          aria-labelledby="h-results"
          data-testid="whatif-results"
          data-costs={`${s.costs.falseAllow},${s.costs.falseChallenge},${s.costs.falseDeny}`}
        >
          <h2 id="h-results">
            Recorded vs what-if{" "}
            <span class="muted">
              (costs {weight(s.costs.falseAllow)} / {weight(s.costs.falseChallenge)} /{" "}
              {weight(s.costs.falseDeny)})
            </span>
          </h2>
          <RangeNote echo={s} />
          <dl class="tiles">
            <Tile label="Events" value={count(s.events)} testId="whatif-events" />
            <Tile label="Replayed" value={count(s.replayed)} testId="whatif-replayed" />
            <Tile label="Kept their decision" value={count(s.kept)} testId="whatif-kept" />
            <Tile label="Labelled" value={count(s.labelled)} testId="whatif-labelled" />
          </dl>
          <div class="grid-2">
            <DataTable
              caption="Decisions as recorded and as the chosen costs would have made them"
              rows={[...DECISIONS]}
              rowKey={(d) => d}
              testId="whatif-table"
              columns={[
                { label: "Decision", cell: (d) => d, rowHeader: true },
                {
                  label: "Recorded",
                  cell: (d) => count(s.recorded[d]),
                  numeric: true,
                  testId: (d) => `recorded-${d}`,
                },
                {
                  label: "What-if",
                  cell: (d) => count(s.whatIf[d]),
                  numeric: true,
                  testId: (d) => `whatif-${d}`,
                },
                { label: "Change", cell: (d) => delta(s.whatIf[d] - s.recorded[d]), numeric: true },
              ]}
            />
            <DataTable
              caption={`Mistakes among the ${s.labelled} labelled events, and their expected cost under the chosen costs`}
              rows={COST_FIELDS}
              rowKey={(f) => f.key}
              testId="mistakes-table"
              footer={[
                "Expected cost",
                decimal(s.expectedCost.recorded, 2),
                decimal(s.expectedCost.whatIf, 2),
              ]}
              columns={[
                { label: "Mistake", cell: (f) => f.label.replace("Cost of a ", ""), rowHeader: true },
                { label: "Recorded", cell: (f) => count(s.mistakes.recorded[f.key]), numeric: true },
                { label: "What-if", cell: (f) => count(s.mistakes.whatIf[f.key]), numeric: true },
              ]}
            />
          </div>
          <PolicyJson policy={s.policy} tenantId={tenantId} />
        </section>
      ) : null}
    </>
  );
}

function CostControl(props: {
  id: string;
  label: string;
  help: string;
  value: number;
  onChange(v: number): void;
}) {
  const { id, label, help, value, onChange } = props;
  const [draft, setDraft] = useState<string | null>(null);
  return (
    <div class="cost">
      <label for={`${id}-range`}>
        {label} <span class="muted">({help})</span>
      </label>
      <div class="cost-row">
        <input
          id={`${id}-range`}
          type="range"
          min={Math.log10(MIN)}
          max={Math.log10(MAX)}
          step={0.01}
          value={Math.log10(clamp(value))}
          aria-valuetext={weight(value)}
          onInput={(e) => {
            setDraft(null);
            onChange(fromSlider(Number(e.currentTarget.value)));
          }}
        />
        <label for={`${id}-number`} class="visually-hidden">
          {label}, as a number
        </label>
        <input
          id={`${id}-number`}
          type="number"
          min={MIN}
          max={MAX}
          step="any"
          inputMode="decimal"
          data-testid={`cost-${id}`}
          value={draft ?? weight(value)}
          onInput={(e) => {
            const text = e.currentTarget.value;
            setDraft(text);
            const v = Number(text);
            if (text !== "" && Number.isFinite(v) && v >= MIN && v <= MAX) onChange(v);
          }}
          onBlur={() => setDraft(null)}
        />
      </div>
    </div>
  );
}

function PolicyJson({ policy, tenantId }: { policy: unknown; tenantId: string }) {
  const [open, setOpen] = useState(false);
  const [copied, setCopied] = useState("");
  const text = JSON.stringify(policy, null, 2);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied("Policy JSON copied to the clipboard.");
    } catch {
      // No clipboard permission: select the text so Ctrl+C copies it.
      const range = document.createRange();
      const pre = document.getElementById("policy-json-text");
      if (pre) range.selectNodeContents(pre);
      const selection = getSelection();
      selection?.removeAllRanges();
      selection?.addRange(range);
      setCopied("Selected the policy JSON: press Ctrl+C (or ⌘C) to copy it.");
    }
  };
  return (
    <section class="policy" aria-labelledby="h-policy">
      <h2 id="h-policy">Policy with these costs</h2>
      <p class="note-box">
        Nothing changes until a person applies it: the console only shows this document. To use these costs,
        save it as <code>{POLICY_FILE}</code> and run{" "}
        <code data-testid="policy-command">{policySetCommand(tenantId)}</code>.
      </p>
      <button type="button" aria-expanded={open} aria-controls="policy-json" onClick={() => setOpen(!open)}>
        {open ? "Hide policy JSON" : "Show policy JSON"}
      </button>
      {open ? (
        <div id="policy-json" class="policy-json">
          <Json value={policy} label="Policy JSON" testId="policy-json" id="policy-json-text" />
          <button type="button" class="secondary" onClick={copy}>
            Copy JSON
          </button>
          <span class="muted" role="status" aria-live="polite">
            {copied}
          </span>
        </div>
      ) : (
        <div id="policy-json" hidden />
      )}
    </section>
  );
}
