import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, api } from "../api.js";
import { dateTime, words } from "../format.js";
import type { Observation, ObservationResolution, ResolutionAnswer, Session } from "../types.js";

/** Whether the session's key may resolve quarantined observations. */
export function mayResolve(session: Session): boolean {
  return session.scopes.includes("ledger:write");
}

type Choice = "accept" | "reject";

/** An observation in a sentence: outcome, value and unit, source. */
export function observationWords(o: Observation): string {
  const value = o.value === null ? "" : ` ${o.value} ${o.unit ?? ""}`.trimEnd();
  return `${words(o.outcome)}${value}${o.source ? ` from ${words(o.source)}` : ""}`;
}

/** Who resolved an observation, how and when, with the note. */
export function ResolutionNote({
  resolution,
  testId,
}: {
  resolution: ObservationResolution | ResolutionAnswer;
  testId?: string;
}) {
  return (
    <span class={`resolution resolution-${resolution.resolution}`} data-testid={testId}>
      <strong>{resolution.resolution === "accept" ? "Accepted" : "Rejected"}</strong> by{" "}
      <code>{resolution.resolvedBy}</code>, {dateTime(resolution.resolvedAt)}
      {resolution.note ? <span class="muted"> · “{resolution.note}”</span> : null}
    </span>
  );
}

interface Props {
  observation: Observation;
  /** The effective observation it conflicted with, when known: accepting supersedes it. */
  conflictsWith: Observation | null;
  onResolved(answer: ResolutionAnswer): void;
}

/**
 * Accept… and Reject… for one quarantined observation. Each opens a modal confirmation saying what
 * will count afterwards, with an optional note; confirming sends the resolution (final, recorded
 * with the session's key and the time). Errors show in the dialog, which stays open.
 */
export function ResolveActions({ observation, conflictsWith, onResolved }: Props) {
  const [choice, setChoice] = useState<Choice | null>(null);
  const [note, setNote] = useState("");
  const [sending, setSending] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const dialog = useRef<HTMLDialogElement>(null);
  const id = observation.feedbackId;
  const what = observationWords(observation);

  useEffect(() => {
    const d = dialog.current;
    if (!d) return;
    if (choice && !d.open) d.showModal();
    if (!choice && d.open) d.close();
  }, [choice]);

  const open = (c: Choice) => {
    setError(null);
    setNote("");
    setChoice(c);
  };
  const confirm = async (event: Event) => {
    event.preventDefault();
    if (!choice || sending) return;
    setSending(true);
    setError(null);
    try {
      const answer = await api.resolve(id, choice, note);
      setChoice(null);
      onResolved(answer);
    } catch (err) {
      setError(err instanceof ApiError ? err : new ApiError(0, "client_error", String(err)));
    } finally {
      setSending(false);
    }
  };

  return (
    <div class="resolve-actions">
      <button
        type="button"
        class="secondary small"
        aria-label={`Accept ${what} (${id})…`}
        data-testid={`resolve-accept-${id}`}
        onClick={() => open("accept")}
      >
        Accept…
      </button>
      <button
        type="button"
        class="secondary small"
        aria-label={`Reject ${what} (${id})…`}
        data-testid={`resolve-reject-${id}`}
        onClick={() => open("reject")}
      >
        Reject…
      </button>
      <dialog
        ref={dialog}
        class="confirm"
        aria-labelledby={`resolve-title-${id}`}
        data-testid="resolve-dialog"
        onClose={() => setChoice(null)}
      >
        {choice ? (
          <form method="dialog" onSubmit={confirm}>
            <h2 id={`resolve-title-${id}`}>
              {choice === "accept" ? "Accept" : "Reject"} this quarantined observation?
            </h2>
            <p>
              <strong>{what}</strong> on event <code>{observation.eventId}</code>, observed{" "}
              {dateTime(observation.observedAt)} (<code>{id}</code>).
            </p>
            <ul>
              {choice === "accept" ? (
                <>
                  <li>It counts toward the totals and the outcome figures from now on.</li>
                  <li>
                    The effective observations of this event that it contradicts stop counting (superseded)
                    {conflictsWith ? (
                      <>
                        : <strong>{observationWords(conflictsWith)}</strong> (
                        <code>{conflictsWith.feedbackId}</code>)
                      </>
                    ) : null}
                    .
                  </li>
                </>
              ) : (
                <>
                  <li>It never counts, and leaves the quarantined list.</li>
                  <li>
                    {conflictsWith ? (
                      <>
                        <strong>{observationWords(conflictsWith)}</strong> stays effective.
                      </>
                    ) : (
                      "The event's effective observations stay as they are."
                    )}
                  </li>
                </>
              )}
              <li>It is recorded with your key and the time, and cannot be changed afterwards.</li>
            </ul>
            <label for={`resolve-note-${id}`}>Note (optional, kept with the record)</label>
            <textarea
              id={`resolve-note-${id}`}
              maxLength={1000}
              rows={3}
              value={note}
              onInput={(e) => setNote((e.target as HTMLTextAreaElement).value)}
            />
            <div class="error-slot" role="alert">
              {error ? (
                <p class="error">
                  {error.message}
                  {error.code ? <span class="code"> ({error.code})</span> : null}
                </p>
              ) : null}
            </div>
            <div class="dialog-actions">
              <button type="submit" disabled={sending} data-testid="resolve-confirm">
                {sending ? "Saving…" : choice === "accept" ? "Accept observation" : "Reject observation"}
              </button>
              <button type="button" class="secondary" disabled={sending} onClick={() => setChoice(null)}>
                Cancel
              </button>
            </div>
          </form>
        ) : null}
      </dialog>
    </div>
  );
}
