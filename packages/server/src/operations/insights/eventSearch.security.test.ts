import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, expectError, makeTestApp, type TestApp } from "../../testing/harness.js";
import { emailHash } from "../verify/signals/email.js";

/**
 * A search never crosses tenants, needs ledger:read, and keeps no raw address: what it matches on is
 * the hash and the truncated network verify stored.
 */
let t: TestApp;
const readers: Record<string, string> = {};
let writerKey = "";
const HASH = emailHash("shared@example.com");
const owned: Record<string, string[]> = { acme: [], globex: [] };

beforeAll(async () => {
  t = await makeTestApp();
  for (const tenant of ["acme", "globex"]) {
    await t.tenant(tenant, { rawPii: true });
    readers[tenant] = (await t.key(tenant, { scopes: ["ledger:read"] })).apiKey;
    const writer = (await t.key(tenant, { scopes: ["verify:write"] })).apiKey;
    if (tenant === "acme") writerKey = writer;
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/verify",
      headers: bearer(writer),
      payload: { action: `${tenant}_signup`, subject: { email: "Shared@Example.com", ip: "203.0.113.77" } },
    });
    owned[tenant]?.push((res.json() as { eventId: string }).eventId);
  }
});
afterAll(() => t.close());

const get = (key: string, url: string) =>
  t.app.inject({ method: "GET", url, headers: { authorization: `Bearer ${key}` } });

describe("searches stay within the caller's tenant", () => {
  it("one address used at two tenants: each finds only its own event, by hash and by network", async () => {
    for (const tenant of ["acme", "globex"]) {
      const key = readers[tenant] as string;
      for (const query of [`emailHash=${HASH}`, "network=203.0.113.1"]) {
        const items = (await get(key, `/v1/events?${query}`)).json().items as { eventId: string }[];
        expect(items.map((e) => e.eventId)).toEqual(owned[tenant]);
      }
    }
  });

  it("the reason counts and the actions are the tenant's own", async () => {
    const reasons = (await get(readers.acme as string, "/v1/stats/reasons")).json() as {
      rows: { events: number }[];
    };
    expect(Math.max(...reasons.rows.map((r) => r.events))).toBe(1);
    expect((await get(readers.acme as string, "/v1/stats/actions")).json().actions).toEqual(["acme_signup"]);
  });

  it("a key without ledger:read cannot search or count", async () => {
    for (const url of [`/v1/events?emailHash=${HASH}`, "/v1/stats/reasons", "/v1/stats/actions"]) {
      expectError(await get(writerKey, url), 403, "insufficient_scope");
    }
  });
});

describe("no raw address is kept to search by", () => {
  it("the event holds the hash and the /24, never the address or the email, even with raw PII allowed", async () => {
    const event = await t.store.events.get("acme", owned.acme?.[0] as string);
    expect(event?.emailHash).toBe(HASH);
    expect(event?.network).toBe("203.0.113.0/24");
    const row = JSON.stringify(event);
    expect(row).not.toContain("203.0.113.77");
    expect(row.toLowerCase()).not.toContain("shared@example.com");
  });
});
