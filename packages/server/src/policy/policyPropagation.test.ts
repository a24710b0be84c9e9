import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bearer, makeTestApp, type TestApp } from "../testing/harness.js";

/**
 * A policy stored by another process (`warden policy set`) reaches this one within
 * WARDEN_POLICY_REFRESH_SECONDS plus one store read, whether or not requests arrive meanwhile: the
 * first verify after a quiet spell already answers from the new policy. The refresh interval is a
 * fake timer (the quiet spell is advanced, not slept); the store reads and the app stay real.
 */
let t: TestApp;
let key: string;
beforeAll(async () => {
  // Only the intervals: the refresh is one, and nothing the app awaits on its request path is.
  vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
  t = await makeTestApp({ env: { WARDEN_POLICY_REFRESH_SECONDS: "1" } });
  await t.tenant("acme");
  key = (await t.key("acme")).apiKey;
});
afterAll(async () => {
  await t.close();
  vi.useRealTimers();
});

const verify = async () =>
  (
    await t.app.inject({
      method: "POST",
      url: "/v1/verify",
      headers: bearer(key),
      payload: {
        action: "signup",
        session: "s",
        subject: { userAgent: "curl/8.5.0", ipTrunc: "198.51.100.0/24" },
      },
    })
  ).json<{ decision: string }>();

describe("policy propagation", () => {
  it("the first verify after a quiet spell longer than the refresh interval answers from the new policy", async () => {
    expect((await verify()).decision).not.toBe("deny");
    // Stored directly, as another process's `warden policy set` does; this process is not told.
    await t.store.policies.put(
      "acme",
      JSON.stringify({ deny: { networks: ["198.51.100.0/24"] } }),
      Date.now(),
    );
    // No requests for a while (one refresh interval and more), then one. A request alone would not
    // reload: by the real clock the cached copy is younger than the interval.
    const cached = t.deps.tenantPolicies.peek("acme");
    await vi.advanceTimersByTimeAsync(1600);
    await vi.waitFor(() => expect(t.deps.tenantPolicies.peek("acme")).not.toBe(cached));
    expect((await verify()).decision).toBe("deny");
  });
});
