import { links, type Route } from "../router.js";
import type { Session } from "../types.js";

const ITEMS = [
  { href: links.overview, label: "Overview", pages: ["overview"] },
  { href: links.events, label: "Events", pages: ["events", "event"] },
  { href: links.outcomes, label: "Outcomes", pages: ["outcomes"] },
  { href: links.calibration, label: "Calibration", pages: ["calibration"] },
  { href: links.whatIf, label: "What-if", pages: ["what-if"] },
  { href: links.campaigns, label: "Campaigns", pages: ["campaigns"] },
];

/** The top bar: the pages (real links), the tenant signed in and Sign out. */
export function Nav({ route, session, onSignOut }: { route: Route; session: Session; onSignOut(): void }) {
  return (
    <header class="top">
      {/* The router ignores hashes that are not routes (#/…), so this in-page link keeps the page. */}
      <a class="skip" href="#main">
        Skip to content
      </a>
      <div class="brand">
        <span class="mark" aria-hidden="true" />
        Warden <span class="sub">console</span>
      </div>
      <nav aria-label="Console pages">
        <ul>
          {ITEMS.map((item) => (
            <li key={item.href}>
              <a href={item.href} aria-current={item.pages.includes(route.page) ? "page" : undefined}>
                {item.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <div class="who">
        <span class="tenant">
          Tenant{" "}
          <code data-testid="tenant-id" title={session.tenantId}>
            {session.tenantId}
          </code>
        </span>
        <button type="button" class="secondary" onClick={onSignOut}>
          Sign out
        </button>
      </div>
    </header>
  );
}
