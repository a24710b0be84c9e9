import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, makeTestApp, type TestApp } from "../testing/harness.js";

/**
 * A policy stored by another process (`warden policy set`) reaches this one within
 * WARDEN_POLICY_REFRESH_SECONDS plus one store read, whether or not requests arrive meanwhile: the
 * first verify after a quiet spell already answers from the new policy.
 */
let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await makeTestApp({ env: { WARDEN_POLICY_REFRESH_SECONDS: "1" } });
  await t.tenant("acme");
  key = (await t.key("acme")).apiKey;
});
afterAll(() => t.close());

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
    // No requests for a while, then one.
    await new Promise((r) => setTimeout(r, 1600));
    expect((await verify()).decision).toBe("deny");
  });
});
