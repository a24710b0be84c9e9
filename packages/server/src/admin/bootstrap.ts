import { duringStartup } from "../deps.js";
import { ALL_SCOPES } from "../domain.js";
import type { Store } from "../store/interfaces.js";
import { type IssuedKey, issueApiKey } from "./apiKeys.js";

export const DEMO_TENANT = "demo";

/**
 * First run: on a database with no tenant, creates the `demo` tenant and one key with every scope.
 * The tenant insert is atomic, so when several processes start at once exactly one issues the key.
 * The count is a start-up read: it retries through store timeouts like the others (deps.ts).
 */
export async function bootstrapDemoTenant(store: Store, now: number): Promise<IssuedKey | undefined> {
  if ((await duringStartup(() => store.tenants.count())) > 0) return undefined;
  const created = await store.tenants.create({
    id: DEMO_TENANT,
    rawPii: false,
    logOnly: false,
    createdAt: now,
  });
  if (!created) return undefined;
  // Retried like the start-up reads: a start that created the tenant and then failed here would
  // leave a demo tenant without the key this run exists to print.
  return duringStartup(() =>
    issueApiKey(store, { tenantId: DEMO_TENANT, scopes: [...ALL_SCOPES], logOnly: false, now }),
  );
}

/**
 * What `warden serve --demo` prints once it listens when the database already had tenants (a second
 * `npm start`): no key is shown again, so it says how to make one.
 */
export function demoHint(demoExists: boolean): string {
  const scopes = ALL_SCOPES.join(",");
  return demoExists
    ? [
        "",
        "Tenant 'demo' exists: its first key was shown once, on the first run. Another one:",
        `  npx warden key create --tenant demo --scopes ${scopes}`,
        "",
      ].join("\n")
    : [
        "",
        "The database has tenants already, so no demo tenant was made. A key for one of them:",
        `  npx warden key create --tenant <tenantId> --scopes ${scopes}   (npx warden tenant list)`,
        "",
      ].join("\n");
}

/** The README's first request, which the banner's `Try:` line sends (printedCommands.test.ts holds them equal). */
export const FIRST_REQUEST =
  '{"action":"signup","session":"sess-42","subject":{"userAgent":"curl/8.5.0","ipTrunc":"203.0.113.0/24"}}';

/** What `warden serve --demo` prints once it listens, when it made the demo tenant: the key, shown once. */
export function demoBanner(demo: IssuedKey, url: string): string {
  return [
    "",
    `First run: created tenant 'demo' and an API key with ${demo.scopes.join(", ")}.`,
    "It is shown once; store it now:",
    "",
    `  ${demo.apiKey}`,
    "",
    `Try: curl -s ${url}/v1/verify -H "Authorization: Bearer ${demo.apiKey}" -H 'Content-Type: application/json' -d '${FIRST_REQUEST}'`,
    "",
  ].join("\n");
}
