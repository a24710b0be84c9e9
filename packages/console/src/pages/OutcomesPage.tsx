import { useState } from "preact/hooks";
import { CsvLink } from "../components/CsvLink.js";
import { DataTable } from "../components/DataTable.js";
import { FiltersBar } from "../components/FiltersBar.js";
import { PageHeading } from "../components/PageHeading.js";
import { RangeNote } from "../components/RangeNote.js";
import { ResolutionNote, ResolveActions } from "../components/ResolveQuarantined.js";
import { Status } from "../components/Status.js";
import { type Filters, rangeQuery } from "../filters.js";
import { count, dateTime, words } from "../format.js";
import { useApi, usePaged } from "../hooks.js";
import { links } from "../router.js";
import { flagOf } from "../stats.js";
import {
  DECISIONS,
  type Observation,
  OUTCOMES,
  type OutcomeStats,
  type QuarantinedItem,
  type ResolutionAnswer,
} from "../types.js";

interface Props {
  filters: Filters;
  onFilters(f: Filters): void;
  /** The session's key has ledger:write: quarantined observations can be accepted or rejected here. */
  canResolve: boolean;
}

const FLAG_WORDS = { missed: "allowed, later abuse", friction: "friction on a good user" } as const;

export function OutcomesPage({ filters, onFilters, canResolve }: Props) {
  const query = rangeQuery(filters);
  const stats = useApi<OutcomeStats>("/v1/stats/outcomes", query);
  const quarantined = usePaged<QuarantinedItem>("/v1/feedback/quarantined", { ...query, limit: 25 });
  // Resolved here: the row stays, showing the resolution, until the list is asked for again.
  const [resolved, setResolved] = useState<ReadonlyMap<string, ResolutionAnswer>>(new Map());
  const onResolved = (answer: ResolutionAnswer) => {
    setResolved((m) => new Map(m).set(answer.feedbackId, answer));
    stats.reload();
  };

  const s = stats.data;
  const cell = new Map((s?.rows ?? []).map((r) => [`${r.decision}|${r.outcome}`, r]));
  const outcomes = [
    ...OUTCOMES,
    ...new Set(
      (s?.rows ?? []).map((r) => r.outcome).filter((o) => !(OUTCOMES as readonly string[]).includes(o)),
    ),
  ];
  const decisions = [
    ...DECISIONS,
    ...new Set(
      (s?.rows ?? []).map((r) => r.decision).filter((d) => !(DECISIONS as readonly string[]).includes(d)),
    ),
  ];
  const flagged = (s?.rows ?? []).filter((r) => r.events > 0 && flagOf(r.decision, r.outcome) !== null);

  return (
    <>
      <PageHeading title="Outcomes">
        What happened after each decision, from the feedback your systems sent: the misses and the friction.
      </PageHeading>
      <FiltersBar filters={filters} onChange={onFilters} />
      <Status loading={stats.loading} errors={[stats.error]} />

      {s ? (
        <div class={stats.loading ? "stale" : undefined}>
          <RangeNote echo={s} />
          <section aria-labelledby="h-matrix">
            <h2 id="h-matrix">Decision × outcome</h2>
            <div class="table-wrap">
              <table class="data matrix" data-testid="outcomes-table">
                <caption>
                  Attempts by the engine’s decision on their first scored verdict (for log-only ones, the
                  decision it would have made) and each effective outcome observed on any of their events (an
                  attempt with two outcomes counts in both columns). Cells marked “allowed, later abuse” are
                  misses; cells marked “friction on a good user” are challenges or denies of users who later
                  converted or were found not abusive.
                </caption>
                <thead>
                  <tr>
                    <th scope="col">Decision</th>
                    <th scope="col" class="num">
                      Attempts in range
                    </th>
                    {outcomes.map((o) => (
                      <th scope="col" class="num" key={o}>
                        {words(o)}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {decisions.map((d) => (
                    <tr key={d}>
                      <th scope="row">{d}</th>
                      <td class="num" data-testid={`outcomes-decisions-${d}`}>
                        {count(s.decisions[d] ?? 0)}
                      </td>
                      {outcomes.map((o) => {
                        const row = cell.get(`${d}|${o}`);
                        const n = row?.events ?? 0;
                        const flag = n > 0 ? flagOf(d, o) : null;
                        return (
                          <td class={flag ? `num flag-${flag}` : "num"} key={o}>
                            <span data-testid={`outcome-${d}-${o}`}>{count(n)}</span>
                            {flag ? <span class="flag-words">{FLAG_WORDS[flag]}</span> : null}
                          </td>
                        );
                      })}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            {flagged.length ? (
              <ul class="findings" data-testid="outcome-findings">
                {flagged.map((r) => (
                  <li key={`${r.decision}|${r.outcome}`} class={`flag-${flagOf(r.decision, r.outcome)}`}>
                    <strong>{count(r.events)}</strong> {r.events === 1 ? "attempt" : "attempts"} decided{" "}
                    <strong>{r.decision}</strong> later had <strong>{words(r.outcome)}</strong> (
                    {FLAG_WORDS[flagOf(r.decision, r.outcome) ?? "missed"]}; {count(r.observations)}{" "}
                    {r.observations === 1 ? "observation" : "observations"}).
                  </li>
                ))}
              </ul>
            ) : (
              <p class="muted">
                No allow was later shown to be abuse, and no challenge or deny hit a good user.
              </p>
            )}
            <p class="downloads">
              <CsvLink path="/v1/stats/outcomes" query={query} label="decision × outcome" />
            </p>
          </section>
        </div>
      ) : null}

      <section aria-labelledby="h-quarantined">
        <h2 id="h-quarantined">
          Quarantined observations
          {s ? (
            <>
              {" "}
              (<span data-testid="quarantined-count">{count(s.quarantinedCount)}</span>)
            </>
          ) : null}
        </h2>
        <p class="muted">
          Feedback that contradicts an earlier effective observation on the same event is kept but does not
          count until someone resolves it. Accepting one makes it count and stops the observations it
          contradicts from counting; rejecting one means it never counts.
        </p>
        {canResolve ? null : (
          <p class="muted" data-testid="resolve-needs-scope">
            Resolving needs an API key with <code>ledger:write</code>; this session’s key does not have it.
          </p>
        )}
        <Status loading={quarantined.loading} errors={[quarantined.error]} />
        {quarantined.loaded ? (
          <>
            <DataTable<QuarantinedItem>
              caption="Quarantined observations and the effective observation each conflicts with"
              rows={quarantined.items}
              rowKey={(q) => q.observation.feedbackId}
              testId="quarantined-table"
              empty="No observation is quarantined in this range."
              columns={[
                {
                  label: "Event",
                  rowHeader: true,
                  cell: (q) => (
                    <a href={links.event(q.observation.eventId)}>
                      <code>{q.observation.eventId}</code>
                    </a>
                  ),
                },
                { label: "Quarantined outcome", cell: (q) => describe(q.observation) },
                {
                  label: "Conflicts with (effective)",
                  cell: (q) => (q.conflictsWith ? describe(q.conflictsWith) : "–"),
                },
                { label: "Received", cell: (q) => dateTime(q.observation.receivedAt, true) },
                {
                  label: "Feedback id",
                  cell: (q) => <code>{q.observation.feedbackId}</code>,
                  className: () => "id-cell",
                },
                ...(canResolve || resolved.size > 0
                  ? [
                      {
                        label: "Resolution",
                        className: () => "resolution-cell",
                        cell: (q: QuarantinedItem) => {
                          const id = q.observation.feedbackId;
                          const done = resolved.get(id);
                          if (done) return <ResolutionNote resolution={done} testId={`resolution-${id}`} />;
                          return (
                            <ResolveActions
                              observation={q.observation}
                              conflictsWith={q.conflictsWith}
                              onResolved={onResolved}
                            />
                          );
                        },
                      },
                    ]
                  : []),
              ]}
            />
            <div class="list-actions">
              {quarantined.nextCursor ? (
                <button type="button" onClick={quarantined.loadMore} disabled={quarantined.loading}>
                  {quarantined.loading ? "Loading…" : "Load more"}
                </button>
              ) : null}
              <CsvLink
                path="/v1/feedback/quarantined"
                query={query}
                label="quarantined observations, up to 50,000"
              />
            </div>
          </>
        ) : null}
      </section>
    </>
  );
}

function describe(o: Observation) {
  return (
    <>
      <strong>{words(o.outcome)}</strong>
      {o.value !== null ? ` ${o.value} ${o.unit ?? ""}` : ""}
      {o.source ? <span class="muted"> from {words(o.source)}</span> : null}
      <span class="muted"> · observed {dateTime(o.observedAt)}</span>
    </>
  );
}
