import type { ComponentChildren } from "preact";
import { AttemptPanel } from "../components/AttemptPanel.js";
import { DataTable } from "../components/DataTable.js";
import { DecisionBadge } from "../components/DecisionBadge.js";
import { Json } from "../components/Json.js";
import { PageHeading } from "../components/PageHeading.js";
import { ResolutionNote, ResolveActions } from "../components/ResolveQuarantined.js";
import { Status } from "../components/Status.js";
import { dateTime, decimal, weight, words } from "../format.js";
import { useApi } from "../hooks.js";
import { links } from "../router.js";
import type { AttemptDetail, ChallengeView, EventDetail, Observation } from "../types.js";
import { actorTypeText, confidenceText, decidedByText } from "../verdictView.js";

/** One event in full: the verdict and its grounds, the token it signed, its challenges and what was observed. */
export function EventPage({ eventId, canResolve }: { eventId: string; canResolve: boolean }) {
  const detail = useApi<EventDetail>(`/v1/events/${encodeURIComponent(eventId)}`);
  const notFound = detail.error?.status === 404;
  const data = detail.data?.event.eventId === eventId ? detail.data : null;
  const read = useApi<AttemptDetail>(`/v1/attempts/${encodeURIComponent(eventId)}`).data;
  const attempt = read && (read.firstEventId === eventId || read.reverifyEventId === eventId) ? read : null;

  return (
    <>
      <p class="crumbs">
        <a href={links.events}>Events</a> /
      </p>
      <PageHeading title={`Event ${eventId}`} />
      <Status loading={detail.loading} errors={[detail.error]} />
      {notFound ? (
        <p class="empty-state" data-testid="event-not-found">
          No event <code>{eventId}</code> in this tenant (404). It may belong to another tenant, or have been
          purged.
        </p>
      ) : null}
      {data && attempt ? <AttemptPanel eventId={eventId} attempt={attempt} /> : null}
      {data ? (
        <EventBody detail={data} attempt={attempt} canResolve={canResolve} onResolved={detail.reload} />
      ) : null}
    </>
  );
}

function risk(signals: Record<string, unknown>): { estimate: number; low?: number; high?: number } | null {
  const r = signals.risk as { estimate?: unknown; low?: unknown; high?: unknown } | undefined;
  if (!r || typeof r.estimate !== "number") return null;
  return {
    estimate: r.estimate,
    ...(typeof r.low === "number" ? { low: r.low } : {}),
    ...(typeof r.high === "number" ? { high: r.high } : {}),
  };
}

function Facts({ items }: { items: [string, ComponentChildren, string?][] }) {
  return (
    <dl class="facts">
      {items.map(([term, value, testId]) => (
        <div key={term}>
          <dt>{term}</dt>
          <dd data-testid={testId}>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

function claimValue(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" && Number.isInteger(value) && value > 1e9 && value < 1e11) {
    return `${value} (${dateTime(new Date(value * 1000).toISOString(), true)})`;
  }
  return JSON.stringify(value);
}

/**
 * What the Challenges section says of an event none was issued on. A re-verify carried one issued on
 * an earlier event: its attempt's first verdict (linked), or, for a re-verify scored as an attempt of
 * its own (its clear not honoured), the challenge its event names.
 */
function noChallengeText(detail: EventDetail, attempt: AttemptDetail | null): ComponentChildren {
  const carried = detail.event.signals.challengeId;
  if (attempt && attempt.reverifyEventId === detail.event.eventId) {
    return (
      <span data-testid="event-challenges-elsewhere">
        No challenge was issued on this re-verify: the one it carried
        {typeof carried === "string" ? (
          <>
            {" "}
            (<code>{carried}</code>)
          </>
        ) : null}{" "}
        was issued on its attempt's first verdict,{" "}
        <a href={links.event(attempt.firstEventId)}>
          <code>{attempt.firstEventId}</code>
        </a>
        .
      </span>
    );
  }
  if (typeof carried === "string") {
    return (
      <span data-testid="event-challenges-elsewhere">
        No challenge was issued on this re-verify: the one it carried, <code>{carried}</code>, was issued on
        an earlier event (its Reasons say why its clear was not honoured).
      </span>
    );
  }
  return "No challenge was issued for this event.";
}

function EventBody({
  detail,
  attempt,
  canResolve,
  onResolved,
}: {
  detail: EventDetail;
  attempt: AttemptDetail | null;
  canResolve: boolean;
  onResolved(): void;
}) {
  const e = detail.event;
  const r = risk(e.signals);
  const observations = detail.observations;
  const byId = new Map(observations.map((o) => [o.feedbackId, o]));
  const claims = Object.entries(e.tokenClaims ?? {});
  const principal = e.principal;
  return (
    <>
      <section aria-labelledby="h-verdict">
        <h2 id="h-verdict">Verdict</h2>
        <Facts
          items={[
            [
              "Decision",
              <DecisionBadge
                key="d"
                decision={e.decision}
                wouldBe={e.wouldBeDecision}
                mode={e.enforcementMode}
                testId="event-decision"
              />,
            ],
            ["Would-be decision", e.wouldBeDecision, "event-would-be"],
            ["Decided by", decidedByText(e.decidedBy), "event-decided-by"],
            ["Actor type", actorTypeText(e.decidedBy, e.actorType), "event-actor-type"],
            ["Confidence", confidenceText(e.decidedBy, e.confidence), "event-confidence"],
            [
              "Risk",
              r ? (
                <>
                  {decimal(r.estimate)}
                  {r.low !== undefined && r.high !== undefined ? (
                    <span class="muted">
                      {" "}
                      ({decimal(r.low)} to {decimal(r.high)})
                    </span>
                  ) : null}
                </>
              ) : (
                "none recorded"
              ),
              "event-risk",
            ],
            ["Degraded", e.degraded ? "yes" : "no", "event-degraded"],
            ["Enforcement mode", words(e.enforcementMode), "event-mode"],
            ["Action", <code key="a">{e.action}</code>],
            ["Surface", e.surface ?? "–"],
            ["Session", e.session ? <a href={links.session(e.session)}>{e.session}</a> : "–"],
            ["Time", dateTime(e.createdAt, true)],
          ]}
        />
      </section>

      <section aria-labelledby="h-reasons">
        <h2 id="h-reasons">Reasons</h2>
        {e.reasons.length ? (
          <ol class="reasons" data-testid="event-reasons">
            {e.reasons.map((reason, i) => (
              <li key={String(i)}>{reason}</li>
            ))}
          </ol>
        ) : (
          <p class="muted">No reasons were recorded.</p>
        )}
      </section>

      <div class="grid-2">
        <section aria-labelledby="h-principal">
          <h2 id="h-principal">Principal</h2>
          {principal ? (
            <Facts
              items={[
                ["Resolved", principal.resolved ? "yes" : "no"],
                ["Operator", principal.operator || "–"],
                ["On behalf of", principal.onBehalfOf || "–"],
                ["Identity basis", principal.identityBasis.length ? principal.identityBasis.join(", ") : "–"],
              ]}
            />
          ) : (
            <p class="muted">Not recorded.</p>
          )}
        </section>
        <section aria-labelledby="h-versions">
          <h2 id="h-versions">Versions and costs</h2>
          <Facts
            items={[
              ["Policy version", <code key="p">{e.policyVersion}</code>, "event-policy-version"],
              ["Engine version", <code key="e">{e.engineVersion}</code>, "event-engine-version"],
              ["Cost of a false allow", weight(e.costs.falseAllow)],
              ["Cost of a false challenge", weight(e.costs.falseChallenge)],
              ["Cost of a false deny", weight(e.costs.falseDeny)],
            ]}
          />
        </section>
      </div>

      <section aria-labelledby="h-claims">
        <h2 id="h-claims">Verdict token claims</h2>
        <DataTable
          caption="Claims of the signed verdictToken"
          rows={claims}
          rowKey={([k]) => k}
          testId="token-claims-table"
          empty="No token claims were recorded."
          columns={[
            { label: "Claim", cell: ([k]) => <code>{k}</code>, rowHeader: true },
            { label: "Value", cell: ([, v]) => claimValue(v) },
          ]}
        />
      </section>

      <section aria-labelledby="h-challenges">
        <h2 id="h-challenges">Challenges</h2>
        <DataTable<ChallengeView>
          caption="Challenges issued for this event"
          rows={detail.challenges ?? []}
          rowKey={(c) => c.challengeId}
          testId="event-challenges-table"
          empty={noChallengeText(detail, attempt)}
          columns={[
            { label: "Challenge", cell: (c) => <code>{c.challengeId}</code>, rowHeader: true },
            { label: "Method", cell: (c) => words(c.method) },
            { label: "Bound to", cell: (c) => c.boundTo },
            { label: "Issued", cell: (c) => dateTime(c.issuedAt, true) },
            { label: "Expires", cell: (c) => dateTime(c.expiresAt, true) },
            {
              label: "Cleared",
              cell: (c) =>
                c.clearedAt
                  ? dateTime(c.clearedAt, true)
                  : Date.parse(c.expiresAt) < Date.now()
                    ? "no, expired"
                    : "no, open",
            },
            { label: "Redeemed", cell: (c) => (c.redeemedAt ? dateTime(c.redeemedAt, true) : "no") },
            {
              label: "Difficulty",
              cell: (c) => (c.difficulty === null ? "–" : String(c.difficulty)),
              numeric: true,
            },
          ]}
        />
      </section>

      <section aria-labelledby="h-observations">
        <h2 id="h-observations">Observations</h2>
        <DataTable<Observation>
          caption="Feedback on this event, in the order it arrived; only effective observations count: a quarantined one conflicts with an earlier effective one until someone accepts or rejects it, and an accepted one supersedes those it contradicts"
          rows={observations}
          rowKey={(o) => o.feedbackId}
          testId="event-observations-table"
          empty="No feedback has been sent for this event."
          columns={[
            { label: "Outcome", cell: (o) => words(o.outcome), rowHeader: true },
            {
              label: "Status",
              cell: (o) => <span class={`status-${o.status}`}>{o.status}</span>,
              testId: (o) => `observation-status-${o.feedbackId}`,
            },
            {
              label: "Conflicts with",
              className: () => "id-cell",
              cell: (o) => {
                if (!o.conflictsWith) return "–";
                const other = byId.get(o.conflictsWith);
                return (
                  <>
                    {other ? `${words(other.outcome)} ` : ""}
                    <code>{o.conflictsWith}</code>
                  </>
                );
              },
            },
            {
              label: "Value",
              cell: (o) => (o.value === null ? "–" : `${o.value} ${o.unit ?? ""}`.trim()),
              numeric: true,
            },
            { label: "Source", cell: (o) => (o.source ? words(o.source) : "–") },
            { label: "Observed", cell: (o) => dateTime(o.observedAt, true) },
            { label: "Received", cell: (o) => dateTime(o.receivedAt, true) },
            { label: "Feedback id", cell: (o) => <code>{o.feedbackId}</code>, className: () => "id-cell" },
            {
              label: "Resolution",
              className: () => "resolution-cell",
              testId: (o) => `observation-resolution-${o.feedbackId}`,
              cell: (o) => {
                if (o.resolution) return <ResolutionNote resolution={o.resolution} />;
                if (o.supersededBy) {
                  return (
                    <>
                      superseded by the accepted <code>{o.supersededBy}</code>
                    </>
                  );
                }
                if (o.status !== "quarantined" || !canResolve) return "–";
                return (
                  <ResolveActions
                    observation={o}
                    conflictsWith={o.conflictsWith ? (byId.get(o.conflictsWith) ?? null) : null}
                    onResolved={onResolved}
                  />
                );
              },
            },
          ]}
        />
      </section>

      <section aria-labelledby="h-signals">
        <h2 id="h-signals">Signals</h2>
        <p class="muted">The protected signals the decision was made from (hashes and truncations only).</p>
        <Json value={e.signals} label="Signals as JSON" testId="event-signals" />
      </section>
    </>
  );
}
