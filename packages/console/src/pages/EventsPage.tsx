import { useState } from "preact/hooks";
import { CsvLink } from "../components/CsvLink.js";
import { DataTable } from "../components/DataTable.js";
import { DecisionBadge } from "../components/DecisionBadge.js";
import { FiltersBar } from "../components/FiltersBar.js";
import { PageHeading } from "../components/PageHeading.js";
import { ReasonBreakdown } from "../components/ReasonBreakdown.js";
import { Status } from "../components/Status.js";
import { type Filters, rangeQuery } from "../filters.js";
import { actionLabel, count, dateTime, decimal, words } from "../format.js";
import { useApi, usePaged } from "../hooks.js";
import { links, navigate } from "../router.js";
import { emailHash, readSearch } from "../search.js";
import { ACTOR_TYPES, DECISIONS, type EventSummary, type ReasonStats } from "../types.js";

interface Props {
  filters: Filters;
  onFilters(f: Filters): void;
  /** The page's URL parameters: the search and the events-only filters live there too. */
  params: URLSearchParams;
  onParams(changes: Record<string, string | undefined>): void;
}

const PAGE_SIZE = 25;
/** What a search looks for: one of these at a time. */
const SEARCH_PARAMS = ["emailHash", "network", "session"] as const;
const SEARCH_LABELS: Record<(typeof SEARCH_PARAMS)[number], string> = {
  emailHash: "email hash",
  network: "network",
  session: "session",
};

/**
 * Find a person's events: by email (hashed in this browser), email hash, event id, session or IP
 * network, then narrowed by decision, actor type, reason code and degraded, all from closed lists.
 */
export function EventsPage({ filters, onFilters, params, onParams }: Props) {
  const [term, setTerm] = useState("");
  const [note, setNote] = useState("");
  const value = (name: string) => params.get(name) ?? "";
  const searched = SEARCH_PARAMS.find((p) => value(p) !== "");
  const query = {
    ...rangeQuery(filters),
    emailHash: value("emailHash") || undefined,
    network: value("network") || undefined,
    session: value("session") || undefined,
    decision: value("decision") || undefined,
    actorType: value("actorType") || undefined,
    reasonCode: value("reasonCode") || undefined,
    degraded: value("degraded") || undefined,
  };
  const list = usePaged<EventSummary>("/v1/events", { ...query, limit: PAGE_SIZE });
  const reasons = useApi<ReasonStats>("/v1/stats/reasons", rangeQuery(filters)).data?.rows ?? [];
  const reasonCode = value("reasonCode");
  const codes = reasons.map((r) => r.code as string);
  if (reasonCode && !codes.includes(reasonCode)) codes.unshift(reasonCode);

  const cleared = { emailHash: undefined, network: undefined, session: undefined };
  const search = async (e: Event) => {
    e.preventDefault();
    const t = readSearch(term);
    setNote("");
    switch (t.kind) {
      case "empty":
        return onParams(cleared);
      case "event":
        return navigate(links.event(t.eventId));
      case "email":
        // The address stays in this page: only its hash goes into the URL and to the server.
        setTerm("");
        return onParams({ ...cleared, emailHash: await emailHash(t.address) });
      case "emailHash":
        setTerm("");
        return onParams({ ...cleared, emailHash: t.hash });
      case "network":
        setTerm("");
        return onParams({ ...cleared, network: t.network });
      case "wideNetwork":
        return setNote(
          "Events keep only the /24 (IPv4) or /48 (IPv6) of an address: search for one of those.",
        );
      case "notOneAddress":
        return setNote(
          "Type one email address (it is hashed here, in this browser): nothing was searched or sent.",
        );
      case "session":
        return onParams({ ...cleared, session: t.session });
    }
  };

  const select = (
    id: string,
    label: string,
    name: string,
    any: string,
    options: readonly string[],
    show: (v: string) => string = words,
  ) => (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={value(name)} onChange={(e) => onParams({ [name]: e.currentTarget.value })}>
        <option value="">{any}</option>
        {options.map((o) => (
          <option value={o} key={o}>
            {show(o)}
          </option>
        ))}
      </select>
    </div>
  );

  const sought = value(searched ?? "session");
  // A hash is long: its first characters name it well enough on screen (the URL holds all of it).
  const soughtText = searched === "emailHash" ? `${sought.slice(0, 12)}…` : sought;
  const title = searched ? `Events of ${SEARCH_LABELS[searched]} ${soughtText}` : "Recent events";
  return (
    <>
      <PageHeading title="Events">
        Every verify Warden answered, newest first. Find a person by email address, email hash, IP address or
        network, session or event id. An email address is hashed in this browser before it is searched: the
        address itself is not sent, nor kept in the page's address.
      </PageHeading>

      <form class="search" aria-label="Search events" onSubmit={search}>
        <label for="event-search">Email, email hash, IP or network, session or event ID</label>
        <div class="search-row">
          <input
            id="event-search"
            type="search"
            placeholder="person@example.com, 203.0.113.7, evt_…"
            spellcheck={false}
            autoComplete="off"
            value={term}
            onInput={(e) => setTerm(e.currentTarget.value)}
          />
          <button type="submit">Search</button>
        </div>
        {note ? (
          <p class="status error" role="alert">
            {note}
          </p>
        ) : null}
      </form>

      <FiltersBar filters={filters} onChange={onFilters}>
        {select("f-decision", "Decision", "decision", "Any decision", DECISIONS)}
        {select("f-actor", "Actor type", "actorType", "Any actor type", ACTOR_TYPES)}
        {select("f-reason", "Reason code", "reasonCode", "Any reason", codes, (c) => {
          const n = reasons.find((r) => r.code === c)?.events;
          return n === undefined ? `${c} (none in this period)` : `${c} (${n})`;
        })}
        {select("f-degraded", "Degraded", "degraded", "Degraded or not", ["true", "false"], (v) =>
          v === "true" ? "Degraded only" : "Scored only",
        )}
      </FiltersBar>

      <Status loading={list.loading} errors={[list.error]} />

      <section aria-labelledby="h-list">
        <h2 id="h-list" data-testid="events-title">
          {title}
        </h2>
        {searched ? (
          <p>
            <a href={links.events}>Back to the recent events</a>
          </p>
        ) : null}
        {list.loaded ? (
          <>
            <DataTable
              caption={
                <>
                  {title}, newest first: <span data-testid="events-shown">{count(list.items.length)}</span>{" "}
                  shown
                  {list.nextCursor ? ", more to load" : ""}
                </>
              }
              rows={list.items}
              rowKey={(e) => e.eventId}
              testId="events-table"
              empty="No events match these filters."
              columns={[
                {
                  label: "Event",
                  rowHeader: true,
                  cell: (e) => (
                    <a href={links.event(e.eventId)}>
                      <code>{e.eventId}</code>
                    </a>
                  ),
                },
                { label: "Time", cell: (e) => dateTime(e.createdAt, true) },
                { label: "Action", cell: (e) => <code>{actionLabel(e.action)}</code> },
                {
                  label: "Session",
                  cell: (e) => (e.session ? <a href={links.session(e.session)}>{e.session}</a> : "–"),
                },
                {
                  label: "Decision",
                  cell: (e) => (
                    <DecisionBadge
                      decision={e.decision}
                      wouldBe={e.wouldBeDecision}
                      mode={e.enforcementMode}
                      degraded={e.degraded}
                    />
                  ),
                },
                { label: "Actor type", cell: (e) => words(e.actorType) },
                { label: "Confidence", cell: (e) => decimal(e.confidence, 2), numeric: true },
                { label: "Risk", cell: (e) => decimal(e.risk), numeric: true },
              ]}
            />
            <div class="list-actions">
              {list.nextCursor ? (
                <button type="button" onClick={list.loadMore} disabled={list.loading}>
                  {list.loading ? "Loading…" : "Load more"}
                </button>
              ) : list.items.length > 0 ? (
                <p class="muted">That is every event matching these filters.</p>
              ) : null}
              <CsvLink path="/v1/events" query={query} label="these events, up to 50,000" />
            </div>
          </>
        ) : null}
      </section>

      <ReasonBreakdown filters={filters} />
    </>
  );
}
