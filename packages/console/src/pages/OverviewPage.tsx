import { useMemo } from "preact/hooks";
import { AttemptTiles } from "../components/AttemptTiles.js";
import { CsvLink } from "../components/CsvLink.js";
import { type Column, DataTable } from "../components/DataTable.js";
import { FiltersBar } from "../components/FiltersBar.js";
import { PageHeading } from "../components/PageHeading.js";
import { RangeNote } from "../components/RangeNote.js";
import { ReasonBreakdown } from "../components/ReasonBreakdown.js";
import { Status } from "../components/Status.js";
import { TimeChart } from "../components/TimeChart.js";
import { type Filters, rangeQuery } from "../filters.js";
import { actionLabel, count, dateTime, percent, words } from "../format.js";
import { useApi } from "../hooks.js";
import { DECISION_COLORS } from "../palette.js";
import {
  attemptTotals,
  type Breakdown,
  breakdownBy,
  bucketSeries,
  decisionByMode,
  totals,
} from "../stats.js";
import {
  type AttemptStats,
  type ChallengeRow,
  type ChallengeStats,
  type DecisionStats,
  ENFORCEMENT_MODES,
} from "../types.js";

interface Props {
  filters: Filters;
  onFilters(f: Filters): void;
}

const breakdownColumns = (name: string, total: number, label = words): Column<Breakdown>[] => [
  { label: name, cell: (b) => label(b.key), rowHeader: true },
  { label: "Events", cell: (b) => count(b.total), numeric: true },
  { label: "Share", cell: (b) => percent(b.total, total), numeric: true },
  { label: "Allow", cell: (b) => count(b.allow), numeric: true },
  { label: "Challenge", cell: (b) => count(b.challenge), numeric: true },
  { label: "Deny", cell: (b) => count(b.deny), numeric: true },
];

const challengeColumns: Column<ChallengeRow>[] = [
  { label: "Method", cell: (r) => words(r.method), rowHeader: true },
  {
    label: "Issued",
    cell: (r) => count(r.issued),
    numeric: true,
    testId: (r) => `challenges-issued-${r.method}`,
  },
  {
    label: "Cleared",
    cell: (r) => count(r.cleared),
    numeric: true,
    testId: (r) => `challenges-cleared-${r.method}`,
  },
  { label: "Clear rate", cell: (r) => percent(r.cleared, r.issued), numeric: true },
  {
    label: "Expired",
    cell: (r) => count(r.expired),
    numeric: true,
    testId: (r) => `challenges-expired-${r.method}`,
  },
  { label: "Open", cell: (r) => count(r.open), numeric: true, testId: (r) => `challenges-open-${r.method}` },
  {
    label: "Redeemed",
    cell: (r) => count(r.redeemed),
    numeric: true,
    testId: (r) => `challenges-redeemed-${r.method}`,
  },
];

export function OverviewPage({ filters, onFilters }: Props) {
  const query = rangeQuery(filters);
  const decisionsQuery = { ...query, bucket: filters.bucket === "auto" ? undefined : filters.bucket };
  const decisions = useApi<DecisionStats>("/v1/stats/decisions", decisionsQuery);
  const challenges = useApi<ChallengeStats>("/v1/stats/challenges", query);
  const attempts = useApi<AttemptStats>("/v1/stats/attempts", decisionsQuery);

  const d = decisions.data;
  const rows = d?.rows ?? [];
  const t = useMemo(() => totals(rows), [rows]);
  const a = useMemo(() => attemptTotals(attempts.data?.rows ?? []), [attempts.data]);
  const series = useMemo(() => {
    if (!d) return null;
    const b = bucketSeries(d.rows, d.since, d.until, d.bucket);
    return {
      ...b,
      lines: [
        { label: "Allow", values: b.counts.allow, color: DECISION_COLORS.allow },
        { label: "Challenge", values: b.counts.challenge, color: DECISION_COLORS.challenge, dash: [8, 4] },
        { label: "Deny", values: b.counts.deny, color: DECISION_COLORS.deny, dash: [2, 3] },
      ],
    };
  }, [d]);
  const byAction = useMemo(() => breakdownBy(rows, (r) => r.action), [rows]);
  const byActor = useMemo(() => breakdownBy(rows, (r) => r.actorType), [rows]);
  const byMode = useMemo(() => decisionByMode(rows, ENFORCEMENT_MODES), [rows]);
  const challengeRows = challenges.data?.rows ?? [];

  return (
    <>
      <PageHeading title="Overview">
        What Warden answered for this tenant: attempts by how they ended, verdicts over time, who asked and
        how challenges ended. An attempt is a first verdict with the re-verify that redeemed its clear; the
        chart and tables below count verdicts (events).
      </PageHeading>
      <FiltersBar filters={filters} onChange={onFilters} bucket />
      <Status
        loading={decisions.loading || challenges.loading || attempts.loading}
        errors={[decisions.error, challenges.error, attempts.error]}
      />
      {d ? (
        <div class={decisions.loading ? "stale" : undefined}>
          <RangeNote echo={d} extra={`per ${d.bucket}`} />
          <AttemptTiles t={a} logOnly={t.logOnly} />

          <section aria-labelledby="h-chart">
            <h2 id="h-chart">Verdicts per {d.bucket}</h2>
            {series ? (
              <>
                <TimeChart
                  xs={series.xs}
                  series={series.lines}
                  yLabel="Events"
                  step={d.bucket === "hour" ? 3600 : 86400}
                  detailsId="decisions-table-alt"
                  label={`Line chart of decisions per ${d.bucket}: ${t.allow} allowed, ${t.challenge} challenged, ${t.deny} denied in the range. The table below has the figures.`}
                />
                <details class="alt" id="decisions-table-alt">
                  <summary>Decisions per {d.bucket} as a table</summary>
                  <DataTable
                    caption={`Decisions per ${d.bucket} (buckets without events left out; times in your zone)`}
                    rows={series.nonEmpty}
                    rowKey={(r) => r.start}
                    testId="decisions-table"
                    columns={[
                      {
                        label: `${d.bucket === "hour" ? "Hour" : "Day"} from`,
                        cell: (r) => dateTime(r.start),
                        rowHeader: true,
                      },
                      { label: "Allow", cell: (r) => count(r.allow), numeric: true },
                      { label: "Challenge", cell: (r) => count(r.challenge), numeric: true },
                      { label: "Deny", cell: (r) => count(r.deny), numeric: true },
                      { label: "Total", cell: (r) => count(r.total), numeric: true },
                    ]}
                  />
                </details>
              </>
            ) : null}
            <p class="downloads">
              <CsvLink path="/v1/stats/decisions" query={decisionsQuery} label="decisions" />
            </p>
          </section>

          <div class="grid-2">
            <section aria-labelledby="h-action">
              <h2 id="h-action">By action</h2>
              <DataTable
                caption="Events by action and decision"
                columns={breakdownColumns("Action", t.total, actionLabel)}
                rows={byAction}
                rowKey={(b) => b.key}
                testId="by-action-table"
              />
            </section>
            <section aria-labelledby="h-actor">
              <h2 id="h-actor">By actor type</h2>
              <DataTable
                caption="Events by actor type and decision"
                columns={breakdownColumns("Actor type", t.total)}
                rows={byActor}
                rowKey={(b) => b.key}
                testId="by-actor-table"
              />
            </section>
          </div>

          <section aria-labelledby="h-mode">
            <h2 id="h-mode">Decision by enforcement mode</h2>
            <DataTable
              caption="Events by the decision answered and the enforcement mode (log-only answers allow and records the decision it would have made)"
              rows={byMode}
              rowKey={(r) => r.decision}
              testId="by-mode-table"
              columns={[
                { label: "Decision", cell: (r) => words(r.decision), rowHeader: true },
                ...ENFORCEMENT_MODES.map(
                  (m): Column<(typeof byMode)[number]> => ({
                    label: words(m),
                    cell: (r) => count(r.counts[m] ?? 0),
                    numeric: true,
                    testId: (r) => `mode-${r.decision}-${m}`,
                  }),
                ),
                { label: "Total", cell: (r) => count(r.total), numeric: true },
              ]}
            />
          </section>
        </div>
      ) : null}

      <section aria-labelledby="h-challenges">
        <h2 id="h-challenges">Challenge outcomes by method</h2>
        {challenges.data ? (
          <div class={challenges.loading ? "stale" : undefined}>
            <DataTable
              caption="Challenges issued in the range: cleared, expired (not cleared, past expiry), still open, and clears redeemed by a later verify"
              columns={challengeColumns}
              rows={challengeRows}
              rowKey={(r) => r.method}
              testId="challenges-table"
              empty="No challenges were issued in this range."
              footer={[
                "All methods",
                count(sum(challengeRows, "issued")),
                count(sum(challengeRows, "cleared")),
                percent(sum(challengeRows, "cleared"), sum(challengeRows, "issued")),
                count(sum(challengeRows, "expired")),
                count(sum(challengeRows, "open")),
                count(sum(challengeRows, "redeemed")),
              ]}
            />
            <p class="downloads">
              <CsvLink path="/v1/stats/challenges" query={query} label="challenge outcomes" />
            </p>
          </div>
        ) : null}
      </section>
      <ReasonBreakdown filters={filters} />
    </>
  );
}

function sum(rows: ChallengeRow[], key: "issued" | "cleared" | "expired" | "open" | "redeemed"): number {
  return rows.reduce((n, r) => n + r[key], 0);
}
