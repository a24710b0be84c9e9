import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "../api.js";
import type { Session } from "../types.js";

/**
 * Sign in with an API key that has ledger:read. The key goes to the server once (POST
 * /console/session), which answers with an HttpOnly cookie; the field is cleared at once and the
 * key is never written to storage or a cookie by the page.
 */
export function SignInPage({ notice, onSignedIn }: { notice: string; onSignedIn(s: Session): void }) {
  const input = useRef<HTMLInputElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");

  useEffect(() => {
    document.title = "Sign in · Warden console";
    input.current?.focus();
  }, []);

  const submit = async (e: Event) => {
    e.preventDefault();
    const field = input.current;
    if (!field) return;
    const apiKey = field.value.trim();
    field.value = "";
    if (!apiKey) {
      setError("Enter an API key.");
      field.focus();
      return;
    }
    setBusy(true);
    setError("");
    try {
      onSignedIn(await api.signIn(apiKey));
    } catch (err) {
      setError((err as Error).message);
      setBusy(false);
      field.focus();
    }
  };

  return (
    <main id="main" class="signin">
      <form class="card" onSubmit={submit} aria-describedby="signin-help">
        <div class="brand">
          <span class="mark" aria-hidden="true" />
          Warden <span class="sub">console</span>
        </div>
        <h1>Sign in</h1>
        <p id="signin-help" class="help">
          Use an API key of your tenant with the <code>ledger:read</code> scope. The key is sent once and is
          not kept by this page; the session lasts until you sign out or it expires.
        </p>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          ref={input}
          type="password"
          name="api-key"
          autoComplete="off"
          spellcheck={false}
          required
          aria-invalid={error ? "true" : undefined}
          aria-describedby={error ? "signin-error" : undefined}
        />
        <button type="submit" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
        <div class="status" role="status" aria-live="polite">
          {error ? (
            <p class="error" id="signin-error" data-testid="signin-error">
              {error}
            </p>
          ) : notice ? (
            <p class="notice">{notice}</p>
          ) : null}
        </div>
      </form>
    </main>
  );
}
