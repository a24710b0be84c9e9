import { type Filters, filterParams, rangeQuery } from "../filters.js";
import { count, words } from "../format.js";
import { useApi } from "../hooks.js";
import { withParams } from "../router.js";
import type { ReasonRow, ReasonStats } from "../types.js";
import { CsvLink } from "./CsvLink.js";
import { DataTable } from "./DataTable.js";

/** The events of a reason code in these filters' period and action: the events page, filtered. */
export const reasonLink = (filters: Filters, code: string) =>
  withParams("#/events", { ...filterParams(filters), reasonCode: code });

/**
 * Events per reason code in the period (GET /v1/stats/reasons), grouped by category (categories with
 * the most events first), each code a link to its events. An event counts once per code it gave, so
 * the rows add up to more than the events.
 */
export function ReasonBreakdown({ filters }: { filters: Filters }) {
  const query = rangeQuery(filters);
  const reasons = useApi<ReasonStats>("/v1/stats/reasons", query);
  const rows = reasons.data?.rows ?? [];
  const byCategory = new Map<string, number>();
  for (const r of rows) byCategory.set(r.category, (byCategory.get(r.category) ?? 0) + r.events);
  const ordered = [...rows].sort(
    (a, b) =>
      (byCategory.get(b.category) ?? 0) - (byCategory.get(a.category) ?? 0) ||
      a.category.localeCompare(b.category) ||
      b.events - a.events,
  );
  return (
    <section aria-labelledby="h-reasons" data-testid="reason-breakdown">
      <h2 id="h-reasons">By reason code</h2>
      {reasons.error ? (
        <p class="status error" role="alert">
          {reasons.error.message}
        </p>
      ) : null}
      {reasons.data ? (
        <>
          <DataTable<ReasonRow>
            caption="Events per reason code, grouped by category; select a code to see its events"
            rows={ordered}
            rowKey={(r) => r.code}
            testId="reasons-table"
            empty="No event in this period carries a reason code."
            columns={[
              {
                label: "Reason code",
                rowHeader: true,
                cell: (r) => (
                  <a href={reasonLink(filters, r.code)} data-testid={`reason-link-${r.code}`}>
                    <code>{r.code}</code>
                  </a>
                ),
              },
              { label: "Category", cell: (r) => words(r.category) },
              {
                label: "Events",
                cell: (r) => count(r.events),
                numeric: true,
                testId: (r) => `reason-events-${r.code}`,
              },
              { label: "Allow", cell: (r) => count(r.decisions.allow), numeric: true },
              { label: "Challenge", cell: (r) => count(r.decisions.challenge), numeric: true },
              { label: "Deny", cell: (r) => count(r.decisions.deny), numeric: true },
            ]}
          />
          <div class="list-actions">
            <CsvLink path="/v1/stats/reasons" query={query} label="the counts per reason code" />
          </div>
        </>
      ) : null}
    </section>
  );
}
