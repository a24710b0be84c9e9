import { describe, expect, it } from "vitest";
import { WardenClient } from "./client.js";
import type { RetryClock } from "./retry.js";
import { backoffMs, SPEC_RETRY_POLICY } from "./retry.js";

/** The retry table (packages/client/README.md), row by row, with a fake clock and a scripted server. */
type Scripted = { status: number; body?: unknown; headers?: Record<string, string> } | "network";

function harness(script: Scripted[], opts: { random?: number } = {}) {
  const calls: { url: string; key: string | null }[] = [];
  const sleeps: number[] = [];
  const clock: RetryClock = {
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => opts.random ?? 0.5,
    now: () => Date.parse("2026-11-24T12:00:00Z"),
  };
  const fetchImpl: typeof fetch = async (input, init) => {
    calls.push({ url: String(input), key: new Headers(init?.headers).get("idempotency-key") });
    const next = script.shift() ?? {
      status: 500,
      body: { error: "x", code: "script_exhausted", message: "" },
    };
    if (next === "network") throw new TypeError("fetch failed");
    return new Response(next.body === undefined ? "" : JSON.stringify(next.body), {
      status: next.status,
      headers: { "content-type": "application/json", ...next.headers },
    });
  };
  const dead: unknown[] = [];
  const client = new WardenClient({
    baseUrl: "http://warden.test",
    apiKey: "wdn_test",
    retry: true,
    fetch: fetchImpl,
    clock,
    onDeadLetter: (letter) => {
      dead.push(letter);
    },
  });
  return { client, calls, sleeps, dead };
}

const unavailable = {
  status: 503,
  body: { error: "service_unavailable", code: "feedback_ingest_failed", message: "" },
};
const ack = { status: 200, body: { ok: true, eventId: "evt_1" } };
const feedback = { eventId: "evt_1", outcome: "converted" as const };
const verdict = (decision: string, degraded = false) => ({
  status: 200,
  body: {
    decision,
    actorType: "unknown",
    confidence: 0,
    reasons: ["r"],
    principal: { resolved: false, operator: "", onBehalfOf: "", identityBasis: [] },
    verdictToken: "t",
    eventId: "evt_v",
    degraded,
    enforcementMode: "enforce",
  },
});

describe("the documented retry policy (docs/api.md#idempotency)", () => {
  it("retry on network errors", async () => {
    const h = harness(["network", ack]);
    expect((await h.client.feedback.send(feedback)).ok).toBe(true);
    expect(h.calls).toHaveLength(2);
  });

  it("retry on 429, waiting at least its Retry-After", async () => {
    const h = harness([
      {
        status: 429,
        body: { error: "x", code: "rate_limited", message: "" },
        headers: { "retry-after": "15" },
      },
      ack,
    ]);
    expect((await h.client.feedback.send(feedback)).ok).toBe(true);
    expect(h.sleeps).toEqual([15_000]);
  });

  it("retry on 5xx Error bodies (feedback and challenge 503)", async () => {
    const challenge503 = {
      status: 503,
      body: { error: "service_unavailable", code: "challenge_unavailable", message: "" },
    };
    const h = harness([unavailable, ack, challenge503, { status: 200, body: {} }]);
    expect((await h.client.feedback.send(feedback)).ok).toBe(true);
    expect((await h.client.challenge.issue({ eventId: "evt_1", session: "s" })).ok).toBe(true);
    expect(h.calls).toHaveLength(4);
  });

  it("do not retry other 4xx: fix the request", async () => {
    for (const status of [400, 401, 403, 404, 409, 410, 413, 415]) {
      const h = harness([{ status, body: { error: "bad_request", code: "some_code", message: "" } }]);
      const result = await h.client.feedback.send(feedback);
      expect({ status, ok: result.ok, tries: h.calls.length }).toEqual({ status, ok: false, tries: 1 });
    }
  });

  it("backoff without Retry-After: exponential with full jitter, base 1 s, factor 2, cap 60 s", async () => {
    const h = harness([unavailable, unavailable, unavailable, unavailable], { random: 0.999 });
    await h.client.feedback.send(feedback);
    expect(h.sleeps).toEqual([999, 1998, 3996]);
    // Full jitter: any time from 0 up to the exponential bound, capped at 60 s.
    expect(backoffMs(SPEC_RETRY_POLICY, 0, undefined, () => 0)).toBe(0);
    expect(backoffMs(SPEC_RETRY_POLICY, 10, undefined, () => 0.5)).toBe(30_000);
    expect(backoffMs(SPEC_RETRY_POLICY, 10, undefined, () => 0.99999)).toBeLessThan(60_000);
  });

  it("maximum: 3 retries after the first attempt (4 tries)", async () => {
    const h = harness(["network", "network", "network", "network", ack]);
    const result = await h.client.feedback.send(feedback);
    expect(result).toMatchObject({ ok: false, status: 0, retryable: true, tries: 4 });
    expect(h.calls).toHaveLength(4);
  });

  it("idempotency: one Idempotency-Key for an attempt, reused across its retries; a new attempt gets a new one", async () => {
    const h = harness([unavailable, unavailable, ack, ack]);
    await h.client.feedback.send(feedback);
    await h.client.feedback.send(feedback);
    const keys = h.calls.map((c) => c.key);
    expect(new Set(keys.slice(0, 3)).size).toBe(1);
    expect(keys[3]).not.toBe(keys[0]);
    const given = harness([unavailable, ack]);
    await given.client.feedback.send(feedback, { idempotencyKey: "fb-42" });
    expect(given.calls.map((c) => c.key)).toEqual(["fb-42", "fb-42"]);
  });

  it("exhausted on verify: fail closed to a local degraded challenge, never allow", async () => {
    const h = harness([
      "network",
      { status: 502, body: { error: "x", code: "bad_gateway", message: "" } },
      "network",
      "network",
    ]);
    const result = await h.client.verify({ action: "signup", subject: {} });
    expect(result).toMatchObject({ decision: "challenge", degraded: true, local: true, eventId: undefined });
    expect(h.calls).toHaveLength(4);
    expect(new Set(h.calls.map((c) => c.key)).size).toBe(1);
  });

  it("a verify 200 degraded challenge is not a transport failure: no retry, returned as the server's challenge", async () => {
    const h = harness([verdict("challenge", true), verdict("allow")]);
    const result = await h.client.verify({ action: "signup", subject: {} });
    expect(result).toMatchObject({ decision: "challenge", degraded: true, local: false, eventId: "evt_v" });
    expect(h.calls).toHaveLength(1);
  });

  it("verify is never retried into an allow: only tries without a verdict are retried", async () => {
    for (const first of [verdict("challenge"), verdict("deny")]) {
      const h = harness([first, verdict("allow")]);
      expect((await h.client.verify({ action: "signup", subject: {} })).decision).toBe(first.body.decision);
      expect(h.calls).toHaveLength(1);
    }
  });

  it("exhausted on feedback: dead-letter with its key; never invent an eventId", async () => {
    const h = harness([unavailable, unavailable, unavailable, unavailable]);
    const result = await h.client.feedback.send(feedback, { idempotencyKey: "fb-1" });
    expect(result.ok).toBe(false);
    expect(h.dead).toEqual([
      {
        feedback,
        idempotencyKey: "fb-1",
        status: 503,
        error: unavailable.body,
        tries: 4,
      },
    ]);
  });

  it("retries are off unless asked for (docs/api.md#idempotency: the official SDKs do not retry automatically)", async () => {
    const calls: string[] = [];
    const client = new WardenClient({
      baseUrl: "http://warden.test",
      apiKey: "k",
      fetch: async (input) => {
        calls.push(String(input));
        return new Response(JSON.stringify(unavailable.body), { status: 503 });
      },
    });
    expect(await client.feedback.send(feedback)).toMatchObject({
      ok: false,
      status: 503,
      retryable: true,
      tries: 1,
    });
    expect(calls).toHaveLength(1);
  });
});

describe("verify fails closed locally", () => {
  it("a timeout, a network error, a 5xx and a refused request are local degraded challenges with their cause", async () => {
    const slow = new WardenClient({
      baseUrl: "http://warden.test",
      apiKey: "k",
      verifyTimeoutMs: 20,
      fetch: (_input, init) =>
        new Promise((_resolve, reject) =>
          init?.signal?.addEventListener("abort", () => reject(init.signal?.reason)),
        ),
    });
    expect(await slow.verify({ action: "signup", subject: {} })).toMatchObject({
      local: true,
      cause: "timeout",
    });
    const cases: [Scripted, string][] = [
      ["network", "network"],
      [{ status: 500, body: { error: "x", code: "internal", message: "" } }, "server_error"],
      [{ status: 429, body: { error: "x", code: "rate_limited", message: "" } }, "rate_limited"],
      [
        { status: 401, body: { error: "unauthorized", code: "invalid_api_key", message: "" } },
        "request_refused",
      ],
      [{ status: 200, body: { not: "a verdict" } }, "server_error"],
    ];
    for (const [answer, cause] of cases) {
      const client = new WardenClient({
        baseUrl: "http://warden.test",
        apiKey: "k",
        fetch: async () => {
          if (answer === "network") throw new TypeError("fetch failed");
          return new Response(JSON.stringify(answer.body), { status: answer.status });
        },
      });
      const result = await client.verify({ action: "signup", subject: {} });
      expect(result).toMatchObject({
        decision: "challenge",
        degraded: true,
        local: true,
        cause,
        verdictToken: undefined,
      });
    }
  });
});
