import { useState } from "preact/hooks";
import { CsvLink } from "../components/CsvLink.js";
import { DataTable } from "../components/DataTable.js";
import { FiltersBar } from "../components/FiltersBar.js";
import { PageHeading } from "../components/PageHeading.js";
import { RangeNote } from "../components/RangeNote.js";
import { niceMax, ReliabilityDiagram } from "../components/ReliabilityDiagram.js";
import { Status } from "../components/Status.js";
import { Tile } from "../components/Tile.js";
import { type Filters, rangeQuery } from "../filters.js";
import { count, rate } from "../format.js";
import { useApi } from "../hooks.js";
import type { CalibrationBin, CalibrationStats } from "../types.js";

interface Props {
  filters: Filters;
  onFilters(f: Filters): void;
}

const BIN_CHOICES = [5, 10, 20] as const;

/** A bin edge as a percentage, whole where it is whole (10%, 33.3%). */
const pct = (v: number) => rate(v, Math.abs(v * 100 - Math.round(v * 100)) < 1e-9 ? 0 : 1);

/** How well the recorded risk estimates match the abuse later observed, bin by bin. */
export function CalibrationPage({ filters, onFilters }: Props) {
  const [bins, setBins] = useState(10);
  const [full, setFull] = useState(false);
  const query = { ...rangeQuery(filters), bins };
  const stats = useApi<CalibrationStats>("/v1/stats/calibration", query);
  const s = stats.data;

  const reach = Math.max(
    0,
    ...(s?.bins ?? [])
      .filter((b) => b.labelled > 0)
      .flatMap((b) => [b.meanRisk ?? b.high, b.observedRate ?? 0, b.interval?.high ?? 0]),
  );
  const max = full ? 1 : niceMax(Math.max(reach * 1.05, 0.01));

  return (
    <>
      <PageHeading title="Calibration">
        Whether a risk of 10% means one in ten turns out abusive: the mean estimated risk of each bin against
        the abuse rate observed among its labelled attempts. An attempt counts once, with the risk of its
        first scored verdict; feedback on any of its events (the re-verify's too) labels it.
      </PageHeading>
      <FiltersBar filters={filters} onChange={onFilters}>
        <div class="field">
          <label for="f-bins">Bins</label>
          <select id="f-bins" value={String(bins)} onChange={(e) => setBins(Number(e.currentTarget.value))}>
            {BIN_CHOICES.map((n) => (
              <option value={String(n)} key={n}>
                {n}
              </option>
            ))}
          </select>
        </div>
      </FiltersBar>
      <Status loading={stats.loading} errors={[stats.error]} />
      {s ? (
        <div class={stats.loading ? "stale" : undefined}>
          <RangeNote echo={s} />
          <dl class="tiles">
            <Tile label="Attempts with a risk estimate" value={count(s.events)} testId="calibration-events" />
            <Tile label="Labelled" value={count(s.labelled)} testId="calibration-labelled" />
            <Tile
              label="Abusive"
              value={count(s.abusive)}
              testId="calibration-abusive"
              detail={s.labelled ? `${rate(s.abusive / s.labelled)} of labelled` : ""}
            />
          </dl>
          <div class="calibration">
            <figure class="diagram">
              <ReliabilityDiagram
                bins={s.bins}
                max={max}
                titleId="diagram-title"
                descId="diagram-desc"
                tableId="calibration-table"
              />
              <figcaption>
                <span id="diagram-title">Reliability diagram{s.action ? ` for action ${s.action}` : ""}</span>
                <span id="diagram-desc" class="muted">
                  {" "}
                  Points on the dashed diagonal are well calibrated; above it Warden underestimates risk,
                  below it overestimates. Bars are Wilson 95% intervals; larger points hold more labelled
                  events. Bins without labelled events are not drawn. The table has every bin.
                </span>
              </figcaption>
              <div class="check">
                <input
                  id="full-range"
                  type="checkbox"
                  checked={full}
                  onChange={(e) => setFull(e.currentTarget.checked)}
                />
                <label for="full-range">Show the full 0–100% range</label>
              </div>
            </figure>
            <div class="calibration-table">
              <DataTable<CalibrationBin>
                caption={`Calibration bins (${s.bins.length}) of the recorded risk estimate`}
                rows={s.bins}
                rowKey={(b) => String(b.low)}
                testId="calibration-table"
                id="calibration-table"
                empty="No event in this range has a recorded risk estimate."
                footer={[
                  "All",
                  count(s.events),
                  count(s.labelled),
                  count(s.abusive),
                  s.labelled ? rate(s.abusive / s.labelled) : "–",
                  "",
                  "",
                ]}
                columns={[
                  { label: "Risk range", cell: (b) => `${pct(b.low)}–${pct(b.high)}`, rowHeader: true },
                  { label: "Attempts", cell: (b) => count(b.events), numeric: true },
                  { label: "Labelled", cell: (b) => count(b.labelled), numeric: true },
                  { label: "Abusive", cell: (b) => count(b.abusive), numeric: true },
                  { label: "Observed rate", cell: (b) => rate(b.observedRate), numeric: true },
                  {
                    label: "95% interval",
                    cell: (b) => (b.interval ? `${rate(b.interval.low)}–${rate(b.interval.high)}` : "–"),
                    numeric: true,
                  },
                  { label: "Mean risk", cell: (b) => rate(b.meanRisk), numeric: true },
                ]}
              />
              <p class="downloads">
                <CsvLink path="/v1/stats/calibration" query={query} label="calibration bins" />
              </p>
            </div>
          </div>
        </div>
      ) : null}
    </>
  );
}
