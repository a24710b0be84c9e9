import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { SettingsService } from "@simplewebauthn/server";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../../../../../../browser/tooling/chromium.mjs";
import { chromiumOrSkip } from "../../../../testing/chromium.js";
import { bearer, makeTestApp, type TestApp } from "../../../../testing/harness.js";

/**
 * device_attestation end to end in Debian's Chromium, with the DevTools protocol's virtual
 * authenticator (WebAuthn.addVirtualAuthenticator) standing in for a platform authenticator: the
 * page runs @warden/browser's deviceAttestationProof (navigator.credentials.create, then .get) with
 * the issued options, and Warden verifies both ceremonies. A passing completion clears the session once; a replayed proof, a proof made for
 * another challenge, a proof made on an origin the tenant did not name, another session and another
 * method's proof are refused with the documented codes. With attestation "direct", the virtual
 * authenticator's self-signed packed statement is refused (it chains to none of the tenant's anchors).
 */
const SUITE = "device_attestation with a virtual authenticator in Chromium";

interface Proof {
  registration: Record<string, unknown>;
  assertion: Record<string, unknown>;
}

if (chromiumOrSkip(SUITE)) {
  let t: TestApp;
  let key: string;
  let browser: Browser;
  let origin: string;
  let otherOrigin: string;
  const servers: http.Server[] = [];
  let n = 0;

  /** The browser package's ES module build (npm run build makes it). */
  const BUNDLE = path.resolve(
    path.dirname(fileURLToPath(import.meta.url)),
    "../../../../../../browser/dist/warden.js",
  );

  /** A page on http://localhost (a secure context, so WebAuthn runs) and @warden/browser at /warden.js. */
  async function pageServer(): Promise<string> {
    const server = http.createServer((req, res) => {
      if (req.url === "/warden.js") {
        res.writeHead(200, { "content-type": "text/javascript; charset=utf-8" });
        res.end(fs.readFileSync(BUNDLE));
        return;
      }
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(
        '<!doctype html><title>Device check</title><main>Device check</main><script type="module">import * as warden from "/warden.js"; window.wardenBrowser = warden;</script>',
      );
    });
    await new Promise<void>((r) => server.listen(0, "localhost", r));
    servers.push(server);
    return `http://localhost:${(server.address() as AddressInfo).port}`;
  }

  beforeAll(async () => {
    t = await makeTestApp();
    await t.tenant("shop");
    await t.tenant("plain");
    await t.tenant("attested");
    origin = await pageServer();
    otherOrigin = await pageServer();
    await t.store.policies.put(
      "shop",
      JSON.stringify({ challenge: { deviceAttestation: { rpId: "localhost", origins: [origin] } } }),
      Date.now(),
    );
    await t.store.policies.put(
      "attested",
      JSON.stringify({
        challenge: {
          // A real root (Apple's WebAuthn root, as @simplewebauthn/server ships it) that Chromium's
          // virtual authenticator does not chain to.
          deviceAttestation: {
            rpId: "localhost",
            origins: [origin],
            attestation: "direct",
            trustAnchors: SettingsService.getRootCertificates({ identifier: "apple" }),
          },
        },
      }),
      Date.now(),
    );
    key = (await t.key("shop")).apiKey;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    for (const s of servers) s.close();
    await t?.close();
  });

  const post = async (apiKey: string, url: string, payload: Record<string, unknown>) => {
    const res = await t.app.inject({ method: "POST", url, headers: bearer(apiKey), payload });
    return { status: res.statusCode, body: res.json() as Record<string, unknown> };
  };

  /** A challenged attempt (no user agent: thin evidence) and a device_attestation challenge for it. */
  async function issued(session: string, apiKey = key) {
    const verdict = await post(apiKey, "/v1/verify", { action: "signup", session, subject: {} });
    expect(verdict.body.decision).toBe("challenge");
    const issue = await post(apiKey, "/v1/challenge", {
      eventId: verdict.body.eventId,
      session,
      prefer: ["device_attestation"],
    });
    expect(issue.status).toBe(200);
    return issue.body as { challengeId: string; method: string; instructions: Record<string, unknown> };
  }

  /** A page on `at` with a fresh virtual authenticator, running both ceremonies with `instructions`. */
  async function ceremonies(at: string, instructions: Record<string, unknown>): Promise<Proof> {
    const page: Page = await browser.newPage();
    try {
      await page.goto(at);
      const cdp = await page.context().newCDPSession(page);
      await cdp.send("WebAuthn.enable");
      await cdp.send("WebAuthn.addVirtualAuthenticator", {
        options: {
          protocol: "ctap2",
          transport: "internal",
          hasResidentKey: true,
          hasUserVerification: true,
          isUserVerified: true,
          automaticPresenceSimulation: true,
        },
      });
      await page.waitForFunction(() => "wardenBrowser" in globalThis);
      return await page.evaluate((ins) => {
        const { wardenBrowser } = globalThis as unknown as {
          wardenBrowser: { deviceAttestationProof(instructions: unknown): Promise<Proof> };
        };
        return wardenBrowser.deviceAttestationProof(ins);
      }, instructions);
    } finally {
      await page.close();
    }
  }

  /** The attestation statement's format, read from the registration's attestationObject (CBOR). */
  function attestationFormat(proof: Proof): string {
    const response = proof.registration.response as { attestationObject: string };
    const bytes = Buffer.from(response.attestationObject, "base64url").toString("latin1");
    return /fmt.(none|packed|tpm|android-key|apple|fido-u2f)/.exec(bytes)?.[1] ?? "unknown";
  }

  const complete = (challengeId: string, session: string, proof: object) =>
    post(key, "/v1/challenge", { challengeId, session, proof });

  describe(SUITE, () => {
    it("issues WebAuthn options bound to the challenge, and a passing completion clears the session once", async () => {
      const session = `s-da-${++n}`;
      const c = await issued(session);
      expect(c.method).toBe("device_attestation");
      expect(c.instructions).toMatchObject({
        type: "webauthn",
        rpId: "localhost",
        attestation: "none",
        creationOptions: {
          rp: { id: "localhost" },
          authenticatorSelection: { userVerification: "preferred" },
        },
        requestOptions: { rpId: "localhost", userVerification: "preferred" },
      });
      const proof = await ceremonies(origin, c.instructions);
      const done = await complete(c.challengeId, session, { method: "webauthn", ...proof });
      expect(done.status).toBe(200);
      expect(done.body).toMatchObject({ ok: true, challengeId: c.challengeId, boundTo: session });
      // The same proof again: the clear is once-only.
      const replay = await complete(c.challengeId, session, { method: "webauthn", ...proof });
      expect({ status: replay.status, code: replay.body.code }).toEqual({
        status: 409,
        code: "challenge_already_solved",
      });
      // The re-verify redeems the clear once.
      const again = await post(key, "/v1/verify", {
        action: "signup",
        session,
        subject: {},
        context: { challengeId: c.challengeId },
      });
      expect(again.body).toMatchObject({ decision: "allow", challengeCleared: true, degraded: false });
      const twice = await post(key, "/v1/verify", {
        action: "signup",
        session,
        subject: {},
        context: { challengeId: c.challengeId },
      });
      expect(twice.body.challengeCleared).toBeUndefined();
    }, 30_000);

    it("refuses a proof made for another challenge, on an origin the tenant did not name, for another session, or of another method", async () => {
      const session = `s-da-${++n}`;
      const first = await issued(session);
      const second = await issued(session);
      const forFirst = await ceremonies(origin, first.instructions);
      // Made for the first challenge: its challenge bytes are not the second's.
      const wrongChallenge = await complete(second.challengeId, session, { method: "webauthn", ...forFirst });
      expect({ status: wrongChallenge.status, code: wrongChallenge.body.code }).toEqual({
        status: 400,
        code: "invalid_challenge_proof",
      });
      expect(String(wrongChallenge.body.message)).toMatch(/challenge/i);
      // Made on another origin of the same RP id, one the tenant's policy does not name.
      const elsewhere = await ceremonies(otherOrigin, second.instructions);
      const wrongOrigin = await complete(second.challengeId, session, { method: "webauthn", ...elsewhere });
      expect({ status: wrongOrigin.status, code: wrongOrigin.body.code }).toEqual({
        status: 400,
        code: "invalid_challenge_proof",
      });
      expect(String(wrongOrigin.body.message)).toMatch(/origin/i);
      // Presented under another session.
      const wrongSession = await complete(second.challengeId, `${session}-other`, {
        method: "webauthn",
        ...forFirst,
      });
      expect({ status: wrongSession.status, code: wrongSession.body.code }).toEqual({
        status: 403,
        code: "challenge_session_mismatch",
      });
      // A proof-of-work nonce for a device_attestation challenge.
      const wrongMethod = await complete(second.challengeId, session, { nonce: "1" });
      expect({ status: wrongMethod.status, code: wrongMethod.body.code }).toEqual({
        status: 400,
        code: "challenge_method_mismatch",
      });
      // An assertion from another credential than the one registered.
      const mixed = await complete(first.challengeId, session, {
        method: "webauthn",
        registration: forFirst.registration,
        assertion: (await ceremonies(origin, first.instructions)).assertion,
      });
      expect({ status: mixed.status, code: mixed.body.code }).toEqual({
        status: 400,
        code: "invalid_challenge_proof",
      });
      expect(String(mixed.body.message)).toMatch(/registered credential/);
      // After all these refusals the first challenge still clears with its own proof.
      const good = await complete(first.challengeId, session, { method: "webauthn", ...forFirst });
      expect(good.status).toBe(200);
    }, 60_000);

    it("attestation direct: the registration must carry an attestation statement that chains to a trust anchor", async () => {
      const attestedKey = (await t.key("attested")).apiKey;
      const session = `s-da-${++n}`;
      const c = await issued(session, attestedKey);
      expect(c.instructions).toMatchObject({
        attestation: "direct",
        creationOptions: { attestation: "direct" },
      });
      const completeAttested = (challengeId: string, proof: Proof) =>
        post(attestedKey, "/v1/challenge", { challengeId, session, proof: { method: "webauthn", ...proof } });
      // A page that asks the authenticator for no attestation, whatever the instructions say.
      const bare = await ceremonies(origin, {
        ...c.instructions,
        creationOptions: { ...(c.instructions.creationOptions as object), attestation: "none" },
      });
      expect(attestationFormat(bare)).toBe("none");
      const refused = await completeAttested(c.challengeId, bare);
      expect({ status: refused.status, code: refused.body.code }).toEqual({
        status: 400,
        code: "invalid_challenge_proof",
      });
      expect(String(refused.body.message)).toMatch(/attestation statement/);
      // The virtual authenticator's packed statement verifies, but its certificate is self-signed (a
      // "Batch Certificate" made afresh for each registration): software, vouched for by no one.
      const attested = await ceremonies(origin, c.instructions);
      expect(attestationFormat(attested)).toBe("packed");
      const selfSigned = await completeAttested(c.challengeId, attested);
      expect({ status: selfSigned.status, code: selfSigned.body.code }).toEqual({
        status: 400,
        code: "invalid_challenge_proof",
      });
      expect(String(selfSigned.body.message)).toMatch(
        /does not chain to a trust anchor in the tenant's policy/,
      );
    }, 30_000);

    it("prefer selects device_attestation only for a tenant that named a relying party", async () => {
      const plainKey = (await t.key("plain")).apiKey;
      const session = `s-da-${++n}`;
      const verdict = await post(plainKey, "/v1/verify", { action: "signup", session, subject: {} });
      const issue = await post(plainKey, "/v1/challenge", {
        eventId: verdict.body.eventId,
        session,
        prefer: ["device_attestation"],
      });
      expect(issue.body.method).toBe("proof_of_work");
    });
  });
}
