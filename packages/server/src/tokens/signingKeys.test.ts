import { createLocalJWKSet, jwtVerify } from "jose";
import { afterEach, describe, expect, it } from "vitest";
import { bearer, makeTestApp, type TestApp } from "../testing/harness.js";
import { activationDelayMs, keepPublishedMs, newSigningKey, SigningKeyring } from "./signingKeys.js";

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

  it("a rotation's key is published by every process before any process signs with it", async () => {
    let now = Date.now();
    t = await makeTestApp({ clock: () => now });
    // A second process on the same store: its own keyring, reloaded on its own schedule.
    const other = new SigningKeyring(t.store, t.deps.config.signingKeyRefreshSeconds, () => now);
    await other.start();
    other.stop();
    const oldKid = t.deps.keyring.activeSigner().kid;
    const delay = activationDelayMs(t.deps.config.signingKeyRefreshSeconds);
    expect(delay).toBeGreaterThan(2 * t.deps.config.signingKeyRefreshSeconds * 1000);
    const next = await newSigningKey(now + delay);
    await t.store.signingKeys.rotate(next, keepPublishedMs(300, 10));

    // One process reloads at once: it publishes the new key and keeps signing with the old one.
    await t.deps.keyring.reload();
    expect(
      t.deps.keyring
        .keySet()
        .keys.map((k) => k.kid)
        .sort(),
    ).toEqual([oldKid, next.kid].sort());
    expect(t.deps.keyring.activeSigner().kid).toBe(oldKid);
    // The other reloads within its refresh interval, still before the activation.
    now += t.deps.config.signingKeyRefreshSeconds * 1000;
    await other.reload();
    expect(other.keySet().keys.map((k) => k.kid)).toContain(next.kid);
    expect(other.activeSigner().kid).toBe(oldKid);
    // At the activation both sign with the new key, without another reload.
    now = next.createdAt;
    expect(t.deps.keyring.activeSigner().kid).toBe(next.kid);
    expect(other.activeSigner().kid).toBe(next.kid);
  });
});
