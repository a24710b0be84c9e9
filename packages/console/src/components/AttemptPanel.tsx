import { dateTime, words } from "../format.js";
import { links } from "../router.js";
import type { AttemptDetail } from "../types.js";
import { DecisionBadge } from "./DecisionBadge.js";

/**
 * How the attempt ended, in words. A challenged attempt says whether one of its challenges was solved
 * (a clear no re-verify redeemed is not an abandoned challenge); a denied one whose re-verify was the
 * deny (a degraded first verdict's clear let it be scored) tells that story.
 */
export function endingText(a: AttemptDetail): string {
  switch (a.ending) {
    case "allowed":
      return "allowed at once";
    case "cleared":
      return "challenged, then cleared: a re-verify redeemed the clear and was allowed";
    case "denied":
      return a.reverify
        ? "challenged, the challenge solved, then denied: the re-verify it let be scored was a deny"
        : "denied";
    case "challenged":
      return a.first.challenges.some((c) => c.clearedAt !== null)
        ? "challenged, and the challenge was solved, but no re-verify redeemed its clear (not yet, or not honoured)"
        : "challenged, and no challenge was solved (abandoned, or still open)";
  }
}

/** The attempt's re-verify as its step says it. */
const reverifyRole = (a: AttemptDetail): string =>
  a.reverify?.event.decision === "deny"
    ? "Re-verify (scored on the solved challenge, denied)"
    : "Re-verify (redeemed the clear)";

/**
 * The attempt an event belongs to (GET /v1/attempts/{eventId}, read once by the event's page): its
 * first verdict and the re-verify that redeemed its clear, with how it ended and the observations on
 * either event (feedback on any of them counts for the attempt).
 */
export function AttemptPanel({ eventId, attempt: a }: { eventId: string; attempt: AttemptDetail }) {
  if (a.firstEventId !== eventId && a.reverifyEventId !== eventId) return null;
  const steps = [
    {
      role: a.first.event.degraded
        ? "First verdict (degraded: the store could not score it)"
        : "First verdict",
      view: a.first,
    },
    ...(a.reverify ? [{ role: reverifyRole(a), view: a.reverify }] : []),
  ];
  const observations = steps.reduce((n, s) => n + s.view.observations.length, 0);
  return (
    <section aria-labelledby="h-attempt" data-testid="attempt-panel">
      <h2 id="h-attempt">Attempt</h2>
      <p>
        This attempt ended <strong data-testid="attempt-ending">{endingText(a)}</strong>.{" "}
        {observations === 1 ? "1 observation" : `${observations} observations`} on its events count for it.
      </p>
      <ol class="attempt-steps">
        {steps.map(({ role, view }) => (
          <li key={view.event.eventId}>
            {role}:{" "}
            {view.event.eventId === eventId ? (
              <code>{view.event.eventId}</code>
            ) : (
              <a href={links.event(view.event.eventId)} data-testid="attempt-other-event">
                <code>{view.event.eventId}</code>
              </a>
            )}{" "}
            <DecisionBadge decision={view.event.decision} /> {dateTime(view.event.createdAt, true)}
            {view.challenges.length > 0
              ? ` · ${view.challenges.length} ${view.challenges.length === 1 ? "challenge" : "challenges"} (${view.challenges.map((c) => words(c.method)).join(", ")})`
              : ""}
          </li>
        ))}
      </ol>
    </section>
  );
}
