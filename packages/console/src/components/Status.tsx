import type { ApiError } from "../api.js";

/**
 * The page's live region: "Loading…" while a request runs, the Error message when one fails, and
 * nothing otherwise. Present from the page's first render so readers announce its changes.
 */
export function Status({ loading, errors }: { loading: boolean; errors: (ApiError | null)[] }) {
  const failed = errors.filter((e): e is ApiError => e !== null);
  return (
    <div class="status" role="status" aria-live="polite" data-testid="status">
      {failed.map((e) => (
        <p class="error" key={`${e.code}:${e.message}`}>
          {e.message}
          {e.code && e.code !== "network_error" ? <span class="code"> ({e.code})</span> : null}
        </p>
      ))}
      {loading && failed.length === 0 ? <p class="loading">Loading…</p> : null}
    </div>
  );
}
