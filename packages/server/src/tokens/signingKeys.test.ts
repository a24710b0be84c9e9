import { createLocalJWKSet, jwtVerify } from "jose";
import { afterEach, describe, expect, it } from "vitest";
import { bearer, makeTestApp, type TestApp } from "../testing/harness.js";
import { keepPublishedMs, newSigningKey } from "./signingKeys.js";

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe("signing keys", () => {
  it("are created on first start and published as an ES256 key set without private parts", async () => {
    t = await makeTestApp();
    const res = await t.app.inject({ method: "GET", url: "/.well-known/jwks.json" });
    const { keys } = res.json() as { keys: Record<string, string>[] };
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({
      kty: "EC",
      crv: "P-256",
      alg: "ES256",
      use: "sig",
      kid: t.deps.keyring.activeSigner().kid,
    });
    expect(keys[0]).not.toHaveProperty("d");
  });

  it("rotate: new tokens use the new key, the retired key stays published until its last token expired", async () => {
    let now = Date.now();
    t = await makeTestApp({ clock: () => now });
    await t.tenant("acme");
    const { apiKey } = await t.key("acme");
    const verify = async () =>
      (
        await (t as TestApp).app.inject({
          method: "POST",
          url: "/v1/verify",
          headers: bearer(apiKey),
          payload: { action: "signup", subject: {} },
        })
      ).json().verdictToken as string;
    const jwks = async () =>
      (await (t as TestApp).app.inject({ method: "GET", url: "/.well-known/jwks.json" })).json() as {
        keys: { kid: string }[];
      };

    const oldKid = t.deps.keyring.activeSigner().kid;
    const oldToken = await verify();
    const { tokenTtlSeconds, signingKeyRefreshSeconds } = t.deps.config;
    const keep = keepPublishedMs(tokenTtlSeconds, signingKeyRefreshSeconds);
    expect(keep).toBeGreaterThan(tokenTtlSeconds * 1000);

    await t.store.signingKeys.rotate(await newSigningKey(now), keep);
    await t.deps.keyring.reload();
    const newKid = t.deps.keyring.activeSigner().kid;
    expect(newKid).not.toBe(oldKid);
    const newToken = await verify();

    const set = await jwks();
    expect(set.keys.map((k) => k.kid).sort()).toEqual([oldKid, newKid].sort());
    const local = createLocalJWKSet(set as never);
    expect((await jwtVerify(oldToken, local)).protectedHeader.kid).toBe(oldKid);
    expect((await jwtVerify(newToken, local)).protectedHeader.kid).toBe(newKid);

    now += keep + 1;
    await t.deps.keyring.reload();
    expect((await jwks()).keys.map((k) => k.kid)).toEqual([newKid]);
  });
});
