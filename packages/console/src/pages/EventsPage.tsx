import { useEffect, useState } from "preact/hooks";
import { CsvLink } from "../components/CsvLink.js";
import { DataTable } from "../components/DataTable.js";
import { DecisionBadge } from "../components/DecisionBadge.js";
import { FiltersBar } from "../components/FiltersBar.js";
import { PageHeading } from "../components/PageHeading.js";
import { Status } from "../components/Status.js";
import { type Filters, rangeQuery } from "../filters.js";
import { count, dateTime, decimal, words } from "../format.js";
import { usePaged } from "../hooks.js";
import { links, navigate } from "../router.js";
import { ACTOR_TYPES, DECISIONS, type EventSummary } from "../types.js";

interface Props {
  filters: Filters;
  onFilters(f: Filters): void;
  /** The session searched for ("" for the recent events). */
  session: string;
}

const PAGE_SIZE = 25;

/** Find an event by id, list a session's events, or page through the recent events. */
export function EventsPage({ filters, onFilters, session }: Props) {
  const [term, setTerm] = useState(session);
  const [decision, setDecision] = useState("");
  const [actorType, setActorType] = useState("");
  useEffect(() => setTerm(session), [session]);

  const query = {
    ...rangeQuery(filters),
    session: session || undefined,
    decision: decision || undefined,
    actorType: actorType || undefined,
  };
  const list = usePaged<EventSummary>("/v1/events", { ...query, limit: PAGE_SIZE });

  const search = (e: Event) => {
    e.preventDefault();
    const value = term.trim();
    if (value.startsWith("evt_")) navigate(links.event(value));
    else navigate(value ? links.session(value) : links.events);
  };

  return (
    <>
      <PageHeading title="Events">
        Every verify Warden answered, newest first. Search for one event by its id, or for the events of a
        session.
      </PageHeading>

      <form class="search" aria-label="Search events" onSubmit={search}>
        <label for="event-search">Event ID or session</label>
        <div class="search-row">
          <input
            id="event-search"
            type="search"
            placeholder="evt_… or a session"
            spellcheck={false}
            autoComplete="off"
            value={term}
            onInput={(e) => setTerm(e.currentTarget.value)}
          />
          <button type="submit">Search</button>
        </div>
      </form>

      <FiltersBar filters={filters} onChange={onFilters}>
        <div class="field">
          <label for="f-decision">Decision</label>
          <select id="f-decision" value={decision} onChange={(e) => setDecision(e.currentTarget.value)}>
            <option value="">Any decision</option>
            {DECISIONS.map((d) => (
              <option value={d} key={d}>
                {d}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="f-actor">Actor type</label>
          <select id="f-actor" value={actorType} onChange={(e) => setActorType(e.currentTarget.value)}>
            <option value="">Any actor type</option>
            {ACTOR_TYPES.map((a) => (
              <option value={a} key={a}>
                {words(a)}
              </option>
            ))}
          </select>
        </div>
      </FiltersBar>

      <Status loading={list.loading} errors={[list.error]} />

      <section aria-labelledby="h-list">
        <h2 id="h-list">
          {session ? (
            <>
              Events of session <code>{session}</code>
            </>
          ) : (
            "Recent events"
          )}
        </h2>
        {session ? (
          <p>
            <a href={links.events}>Back to the recent events</a>
          </p>
        ) : null}
        {list.loaded ? (
          <>
            <DataTable
              caption={
                <>
                  {session ? `Events of session ${session}` : "Recent events"}, newest first:{" "}
                  <span data-testid="events-shown">{count(list.items.length)}</span> shown
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
                { label: "Action", cell: (e) => e.action },
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
    </>
  );
}
