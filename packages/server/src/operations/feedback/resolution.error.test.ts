import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StoreUnavailableError } from "../../store/interfaces.js";
import { bearer, expectError, faultyStore, makeTestApp, type TestApp } from "../../testing/harness.js";

/**
 * The failures of POST /v1/feedback/{feedbackId}/resolution, each a stable code from the catalogue:
 * unknown or another tenant's observation 404, not quarantined 409, resolved the other way 409, a bad
 * body 400, a key without ledger:write 403, a store outage 503; and from the console, the session
 * cookie only with the console's own header and Origin.
 */
let t: TestApp;
const failing = new Set<string>();
let writer: string;
let reviewer: string;
let reviewerId: string;
let reader: string;
let globex: string;
let effectiveId: string;
let quarantinedIds: string[];

const post = (url: string, payload: unknown, headers: Record<string, string>) =>
  t.app.inject({ method: "POST", url, headers, payload: payload as Record<string, unknown> });
const resolve = (feedbackId: string, payload: unknown, apiKey = reviewer) =>
  post(`/v1/feedback/${feedbackId}/resolution`, payload, bearer(apiKey));

beforeAll(async () => {
  t = await makeTestApp({
    wrapStore: (s) => faultyStore(s, { failing, error: () => new StoreUnavailableError("injected outage") }),
    env: { WARDEN_CONSOLE_SIGNINS_PER_MINUTE: "100", WARDEN_ADMIN_HOSTS: "warden.test" },
  });
  await t.tenant("acme");
  await t.tenant("globex");
  writer = (await t.key("acme", { scopes: ["verify:write", "feedback:write"] })).apiKey;
  ({ apiKey: reviewer, keyId: reviewerId } = await t.key("acme", {
    scopes: ["ledger:read", "ledger:write"],
  }));
  reader = (await t.key("acme", { scopes: ["ledger:read"] })).apiKey;
  globex = (await t.key("globex")).apiKey;
  const eventId = (await post("/v1/verify", { action: "signup", subject: {} }, bearer(writer))).json()
    .eventId as string;
  // Three abuse_confirmed observations, distinct by observedAt, all quarantined against converted.
  for (const [i, outcome] of [
    "converted",
    "abuse_confirmed",
    "abuse_confirmed",
    "abuse_confirmed",
  ].entries()) {
    const observedAt = new Date(Date.now() - 1000 * (i + 1)).toISOString();
    const res = await post("/v1/feedback", { eventId, outcome, observedAt }, bearer(writer));
    expect(res.statusCode).toBe(200);
  }
  const view = await t.app.inject({ method: "GET", url: `/v1/events/${eventId}`, headers: bearer(reader) });
  const obs = view.json().observations as { feedbackId: string; status: string }[];
  effectiveId = obs.find((o) => o.status === "effective")?.feedbackId ?? "";
  quarantinedIds = obs.filter((o) => o.status === "quarantined").map((o) => o.feedbackId);
  expect(quarantinedIds).toHaveLength(3);
});
afterAll(() => t.close());

describe("resolution errors", () => {
  it("an unknown feedbackId, or another tenant's, is 404 unknown_feedback_id", async () => {
    expectError(await resolve("fb_nope", { resolution: "reject" }), 404, "unknown_feedback_id");
    expectError(
      await resolve(quarantinedIds[0] ?? "", { resolution: "reject" }, globex),
      404,
      "unknown_feedback_id",
    );
  });

  it("an observation that is not quarantined is 409 feedback_not_quarantined", async () => {
    expectError(await resolve(effectiveId, { resolution: "accept" }), 409, "feedback_not_quarantined");
  });

  it("resolved one way, the other way is 409 feedback_already_resolved and changes nothing", async () => {
    const id = quarantinedIds[1] ?? "";
    expect((await resolve(id, { resolution: "reject" })).statusCode).toBe(200);
    expectError(await resolve(id, { resolution: "accept" }), 409, "feedback_already_resolved");
    const stored = await t.store.feedback.get("acme", id);
    expect(stored?.status).toBe("rejected");
  });

  it("a bad body is 400 with the field's code", async () => {
    const id = quarantinedIds[0] ?? "";
    expectError(await resolve(id, { resolution: "maybe" }), 400, "invalid_resolution");
    expectError(await resolve(id, { resolution: 1 }), 400, "invalid_resolution");
    expectError(await resolve(id, {}), 400, "missing_required_field");
    expectError(await resolve(id, { resolution: null }), 400, "missing_required_field");
    expectError(await resolve(id, { resolution: "reject", by: "me" }), 400, "invalid_field");
    expectError(await resolve(id, { resolution: "reject", note: "x".repeat(1001) }), 400, "invalid_field");
    expectError(await resolve(id, { resolution: "reject", note: 5 }), 400, "invalid_field");
    expectError(
      await t.app.inject({
        method: "POST",
        url: `/v1/feedback/${id}/resolution`,
        headers: bearer(reviewer),
        payload: "{not json",
      }),
      400,
      "invalid_json",
    );
    expect((await t.store.feedback.get("acme", id))?.status).toBe("quarantined");
  });

  it("needs ledger:write: a ledger:read key is 403 insufficient_scope, no key 401", async () => {
    const id = quarantinedIds[0] ?? "";
    expectError(await resolve(id, { resolution: "reject" }, reader), 403, "insufficient_scope");
    expectError(
      await post(
        `/v1/feedback/${id}/resolution`,
        { resolution: "reject" },
        { "content-type": "application/json" },
      ),
      401,
      "invalid_api_key",
    );
  });

  it("a store outage is 503 store_unavailable and nothing is resolved", async () => {
    const id = quarantinedIds[0] ?? "";
    failing.add("feedback.resolve");
    try {
      expectError(await resolve(id, { resolution: "reject" }), 503, "store_unavailable");
    } finally {
      failing.delete("feedback.resolve");
    }
    expect((await t.store.feedback.get("acme", id))?.status).toBe("quarantined");
  });
});

describe("resolving from the console (session cookie)", () => {
  const signIn = async (apiKey: string) => {
    const res = await post(
      "/console/session",
      { apiKey },
      { "content-type": "application/json", host: "warden.test", origin: "http://warden.test" },
    );
    expect(res.statusCode).toBe(200);
    return String(res.headers["set-cookie"]).split(";")[0] as string;
  };
  /** From the console's page unless `headers` says otherwise (undefined: not sent). */
  const fromConsole = (cookie: string, id: string, headers: Record<string, string | undefined> = {}) =>
    post(
      `/v1/feedback/${id}/resolution`,
      { resolution: "accept" },
      Object.fromEntries(
        Object.entries({
          cookie,
          host: "warden.test",
          origin: "http://warden.test",
          "x-warden-console": "1",
          "content-type": "application/json",
          ...headers,
        }).filter(([, v]) => v !== undefined),
      ) as Record<string, string>,
    );

  it("refuses a cross-site request: no console header, or another Origin, is 403 forbidden_origin", async () => {
    const cookie = await signIn(reviewer);
    const id = quarantinedIds[0] ?? "";
    expectError(await fromConsole(cookie, id, { "x-warden-console": "" }), 403, "forbidden_origin");
    expectError(await fromConsole(cookie, id, { origin: "https://evil.example" }), 403, "forbidden_origin");
    expect((await t.store.feedback.get("acme", id))?.status).toBe("quarantined");
  });

  it("refuses a resolution that names no origin: no Origin and no Sec-Fetch-Site: same-origin is 403 forbidden_origin", async () => {
    const cookie = await signIn(reviewer);
    const id = quarantinedIds[0] ?? "";
    for (const headers of [
      { origin: undefined },
      { origin: undefined, "sec-fetch-site": "cross-site" },
      { origin: undefined, "sec-fetch-site": "same-site" },
      { origin: "null" },
      { "sec-fetch-site": "cross-site" },
    ]) {
      expectError(await fromConsole(cookie, id, headers), 403, "forbidden_origin");
    }
    expect((await t.store.feedback.get("acme", id))?.status).toBe("quarantined");
  });

  it("where a browser drops Origin, Sec-Fetch-Site: same-origin stands in", async () => {
    const cookie = await signIn(reviewer);
    // quarantinedIds[1] was rejected above: the answer is about the observation, past the origin check.
    const res = await fromConsole(cookie, quarantinedIds[1] ?? "", {
      origin: undefined,
      "sec-fetch-site": "same-origin",
    });
    expectError(res, 409, "feedback_already_resolved");
  });

  it("a session of a key without ledger:write is 403 insufficient_scope", async () => {
    const cookie = await signIn(reader);
    expectError(await fromConsole(cookie, quarantinedIds[0] ?? ""), 403, "insufficient_scope");
  });

  it("from the console's page it resolves, recorded as the session's key", async () => {
    const cookie = await signIn(reviewer);
    const res = await fromConsole(cookie, quarantinedIds[2] ?? "");
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ resolution: "accept", resolvedBy: reviewerId, status: "effective" });
  });
});
