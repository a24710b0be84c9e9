import { dateTime, words } from "../format.js";
import { useApi } from "../hooks.js";
import { links } from "../router.js";
import type { AttemptDetail } from "../types.js";
import { DecisionBadge } from "./DecisionBadge.js";

const ENDING_TEXT = {
  allowed: "allowed at once",
  cleared: "challenged, then cleared: a re-verify redeemed the clear and was allowed",
  challenged: "challenged, and no clear was redeemed (abandoned, or still open)",
  denied: "denied",
} as const;

/**
 * The attempt an event belongs to: its first verdict and the re-verify that redeemed its clear, with
 * how it ended and the observations on either event (feedback on any of them counts for the attempt).
 */
export function AttemptPanel({ eventId }: { eventId: string }) {
  const attempt = useApi<AttemptDetail>(`/v1/attempts/${encodeURIComponent(eventId)}`);
  const a = attempt.data;
  if (!a || (a.firstEventId !== eventId && a.reverifyEventId !== eventId)) return null;
  const steps = [
    { role: "First verdict", view: a.first },
    ...(a.reverify ? [{ role: "Re-verify (redeemed the clear)", view: a.reverify }] : []),
  ];
  const observations = steps.reduce((n, s) => n + s.view.observations.length, 0);
  return (
    <section aria-labelledby="h-attempt" data-testid="attempt-panel">
      <h2 id="h-attempt">Attempt</h2>
      <p>
        This attempt ended <strong data-testid="attempt-ending">{ENDING_TEXT[a.ending]}</strong>.{" "}
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
