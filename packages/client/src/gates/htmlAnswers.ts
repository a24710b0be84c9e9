import type { RequestView } from "../subject.js";

/**
 * The gate's answers to a plain HTML form post (a page navigation, not a script's fetch): pages, not
 * JSON, so that a `<form method="post">` works with no script of the app's. The challenge page holds
 * `<warden-challenge auto submit>` inside a form that posts the same fields back to the same address,
 * which the widget fills with `wardenTicket` and `wardenChallengeId` once the check clears: the gate's
 * re-verify then resumes the attempt (the form's digest is the one the ticket carries).
 */

/**
 * A form of this site's own pages posted by the browser itself (not a script's fetch): a same-origin
 * navigation by Fetch Metadata, or, from a browser without it, a form post that asks for HTML and
 * whose Origin is this host. Only such a post gets pages: the challenge page posts the form back
 * from this origin, so a page of another site must not reach it (its cross-site post, which the
 * browser may send without the person's cookies, would come back as a same-site one with them).
 */
export function isFormNavigation(view: RequestView): boolean {
  // What a form sends (a browser's navigation never carries JSON: that is a script's copy of one).
  const type = String(view.headers["content-type"] ?? "").toLowerCase();
  if (!type.startsWith("application/x-www-form-urlencoded") && !type.startsWith("multipart/form-data"))
    return false;
  const mode = view.headers["sec-fetch-mode"];
  if (typeof mode === "string")
    return mode === "navigate" && view.headers["sec-fetch-site"] === "same-origin";
  const accept = String(view.headers.accept ?? "");
  return accept.includes("text/html") && sameOrigin(view.headers.origin, view.headers.host);
}

function sameOrigin(origin: unknown, host: unknown): boolean {
  if (typeof origin !== "string" || typeof host !== "string") return false;
  try {
    return new URL(origin).host === host;
  } catch {
    return false;
  }
}

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The form's text fields as hidden inputs (repeated fields repeated); a file cannot be posted back. */
function hiddenFields(form: Record<string, unknown>): string {
  const inputs: string[] = [];
  for (const [name, value] of Object.entries(form)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (typeof item === "string")
        inputs.push(`<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(item)}">`);
    }
  }
  return inputs.join("\n");
}

const page = (title: string, scriptSrc: string | undefined, content: string) =>
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
${scriptSrc === undefined ? "" : `<script type="module" src="${escapeHtml(scriptSrc)}"></script>\n`}</head>
<body>
<main>
${content}
</main>
</body>
</html>
`;

export interface HtmlPages {
  /** Where the page loads @warden/browser's ES module (its `dist/warden.js`). */
  scriptSrc: string;
  /** The gated route's own address (path and query), where the form is posted back. */
  action: string;
  /**
   * The form to post back: its fields without the gate's own, and the page's evidence it came with
   * (`wardenPage`, `wardenSignals`): the re-verify reads what the request carries, and a form that
   * lost its page's evidence on the way back would be a program's where the tenant requires it.
   */
  form: Record<string, unknown>;
}

export function challengePage(ticket: string, pages: HtmlPages): string {
  return page(
    "A quick check",
    pages.scriptSrc,
    `<form method="post" action="${escapeHtml(pages.action)}">
${hiddenFields(pages.form)}
<warden-challenge ticket="${escapeHtml(ticket)}" auto submit></warden-challenge>
<noscript><p>This check needs JavaScript. Turn it on and send the form again.</p></noscript>
</form>`,
  );
}

export function unavailablePage(pages: HtmlPages): string {
  return page(
    "Try again",
    undefined,
    `<form method="post" action="${escapeHtml(pages.action)}">
${hiddenFields(pages.form)}
<p role="alert">This request could not be checked right now. Try again in a few seconds.</p>
<button type="submit">Try again</button>
</form>`,
  );
}

export function refusedPage(reference: string): string {
  return page(
    "Refused",
    undefined,
    `<p role="alert">This request was refused. If you think this is a mistake, quote the reference ${escapeHtml(reference)}.</p>`,
  );
}
