import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compilePolicy } from "../../policy/tenantPolicy.js";
import { bearer, CHROME_HEADERS, CHROME_UA, makeTestApp, type TestApp } from "../../testing/harness.js";
import { openPageToken, probeSeed } from "../../tokens/pageToken.js";
import { layoutProbe } from "./signals/layoutProbe.js";
import { environmentDigest } from "./signals/pageEnvironment.js";

/**
 * The page's environment (docs/api.md, "Page evidence"): a page token asked for with `probe` hands
 * the page boxes to lay out, and verify requires their measurements; the environment's device facts
 * are held to the user agent, and its digest is recorded with the event.
 */
const NET = "198.51.100.0/24";
let t: TestApp;
let now = Date.now();
let apiKey: string;

beforeAll(async () => {
  // Logic, not the machine's load: a store call the full suite's load holds past the harness's 40 ms
  // would answer the degraded challenge and leave the campaign's counts short.
  t = await makeTestApp({ clock: () => now, env: { WARDEN_STORE_TIMEOUT_MS: "2000" } });
  await t.tenant("env");
  await t.store.policies.put("env", JSON.stringify({ requirePage: true }), now);
  apiKey = (await t.key("env")).apiKey;
});
afterAll(async () => {
  await t?.close();
});

async function token(probe: boolean) {
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/page-tokens",
    headers: bearer(apiKey),
    payload: { subject: { userAgent: CHROME_UA, ipTrunc: NET }, ...(probe && { probe: true }) },
  });
  expect(res.statusCode).toBe(200);
  return res.json() as { pageToken: string; probe?: { boxes: unknown[] } };
}

/**
 * The seed of a token's probe, as the server keys it: what a page's layout engine measures follows
 * from its boxes (layoutProbe.browser.test.ts), computed here from the same seed.
 */
function seedOf(pageToken: string): string {
  const key = t.deps.keyring.pageKey(pageToken.split(".")[1] ?? "") as Buffer;
  return probeSeed(key, openPageToken(pageToken, () => key)?.nonce as string);
}

const PERSON = { elapsedMs: 9000, keys: 31, pointerMoves: 84, clicks: 2 };
/** What a person's Chromium on Windows reports, the probe's measurements aside. */
const WINDOWS_DEVICE = {
  screen: "1920x1080",
  colorDepth: 24,
  pixelRatio: 1,
  cores: 8,
  memory: 8,
  touchPoints: 0,
  timezone: "Europe/Berlin",
  languages: "de-DE,de,en",
  platform: "Win32",
  renderer: "ANGLE (NVIDIA, NVIDIA GeForce RTX 3060 Direct3D11 vs_5_0 ps_5_0, D3D11)",
  canvas: "1a2b3c4d5e",
  canvasNoise: false,
};

let sessions = 0;
async function verify(page: Record<string, unknown>, userAgent = CHROME_UA) {
  now += 10_000;
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/verify",
    headers: bearer(apiKey),
    payload: {
      action: "signup",
      session: `env-${++sessions}`,
      subject: { userAgent, ipTrunc: NET, headers: { ...CHROME_HEADERS, "user-agent": userAgent }, page },
    },
  });
  expect(res.statusCode).toBe(200);
  const verdict = res.json() as { decision: string; actorType: string; eventId: string };
  const event = await t.store.events.get("env", verdict.eventId);
  const findings = ((event?.signals.findings ?? []) as { id: string }[]).map((f) => f.id);
  return { ...verdict, findings, signals: event?.signals ?? {} };
}

describe("a page token with a layout probe", () => {
  it("hands the page the boxes of the token's own probe, and marks the token", async () => {
    const { pageToken, probe } = await token(true);
    expect(probe?.boxes).toEqual(JSON.parse(JSON.stringify(layoutProbe(seedOf(pageToken)).boxes)));
    // Not the probe of the nonce the token's readable payload holds: that needs the key.
    const nonce = openPageToken(pageToken, (kid) => t.deps.keyring.pageKey(kid))?.nonce as string;
    expect(layoutProbe(nonce).expected).not.toEqual(layoutProbe(seedOf(pageToken)).expected);
    const plain = await token(false);
    expect(plain.probe).toBeUndefined();
  });

  it("lets a form with the probe's measurements through, and records the environment's digest", async () => {
    const { pageToken } = await token(true);
    const v = await verify({
      token: pageToken,
      behaviour: PERSON,
      environment: { ...WINDOWS_DEVICE, probe: [...layoutProbe(seedOf(pageToken)).expected] },
    });
    expect(v.findings).not.toContain("page_engine_absent");
    expect(v.decision).toBe("allow");
    // The digest of the device facts (the probe's measurements differ per token and are left out).
    expect(v.signals.environment).toBe(environmentDigest(WINDOWS_DEVICE));
    expect(v.signals.shape).toMatch(/^[0-9a-f]{32}$/);
  });

  it("refuses a form without the measurements, or with another token's, as a client without a browser engine", async () => {
    const { pageToken } = await token(true);
    const other = await token(true);
    const nonce = openPageToken(pageToken, (kid) => t.deps.keyring.pageKey(kid))?.nonce as string;
    for (const environment of [
      undefined,
      WINDOWS_DEVICE,
      { ...WINDOWS_DEVICE, probe: [...layoutProbe(seedOf(other.pageToken)).expected] },
      // The probe of the token's readable nonce, computed without the key.
      { ...WINDOWS_DEVICE, probe: [...layoutProbe(nonce).expected] },
    ]) {
      const v = await verify({ token: pageToken, behaviour: PERSON, ...(environment && { environment }) });
      expect(v.findings).toContain("page_engine_absent");
      expect(v.actorType).toBe("agent_abusive");
      expect(v.decision).not.toBe("allow");
    }
  });

  it("asks nothing of a token issued without a probe (a page of an older @warden/browser)", async () => {
    const { pageToken } = await token(false);
    const v = await verify({ token: pageToken, behaviour: PERSON });
    expect(v.findings).not.toContain("page_engine_absent");
    expect(v.decision).toBe("allow");
  });
});

describe("the page's device facts against the user agent", () => {
  it("a phone's user agent on a page without touch, or a GPU of another platform, contradict it", async () => {
    const iphone =
      "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1";
    const { pageToken } = await token(false);
    const noTouch = await verify(
      { token: pageToken, behaviour: PERSON, environment: WINDOWS_DEVICE },
      iphone,
    );
    expect(noTouch.findings).toContain("page_environment_inconsistent");
    const mac =
      "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
    const direct3d = await verify(
      { token: (await token(false)).pageToken, behaviour: PERSON, environment: WINDOWS_DEVICE },
      mac,
    );
    expect(direct3d.findings).toContain("page_environment_inconsistent");
    const own = await verify({
      token: (await token(false)).pageToken,
      behaviour: PERSON,
      environment: WINDOWS_DEVICE,
    });
    expect(own.findings).not.toContain("page_environment_inconsistent");
    // Windows on Arm: a Snapdragon laptop's Adreno under Direct3D is Windows' own; on a Mac it is not.
    const snapdragon = {
      ...WINDOWS_DEVICE,
      renderer: "ANGLE (Qualcomm, Qualcomm(R) Adreno(TM) X1-85 GPU Direct3D11 vs_5_0 ps_5_0, D3D11)",
    };
    const onArm = await verify({
      token: (await token(false)).pageToken,
      behaviour: PERSON,
      environment: snapdragon,
    });
    expect(onArm.findings).not.toContain("page_environment_inconsistent");
    const adrenoMac = await verify(
      { token: (await token(false)).pageToken, behaviour: PERSON, environment: snapdragon },
      mac,
    );
    expect(adrenoMac.findings).toContain("page_environment_inconsistent");
  });
});

describe("a campaign: one environment from many networks (signals/campaign.ts)", () => {
  it("surges once one environment passes the floor in ten minutes, and each network alone stays under its limit", async () => {
    await t.tenant("camp");
    const key = (await t.key("camp")).apiKey;
    const attempt = async (i: number, environment: Record<string, unknown>) => {
      now += 5_000;
      const res = await t.app.inject({
        method: "POST",
        url: "/v1/verify",
        headers: bearer(key),
        payload: {
          action: "signup",
          session: `camp-${i}`,
          subject: {
            userAgent: CHROME_UA,
            ipTrunc: `203.0.${i}.0/24`,
            headers: CHROME_HEADERS,
            page: { behaviour: PERSON, environment },
          },
        },
      });
      const verdict = res.json() as {
        decision: string;
        actorType: string;
        reasons: string[];
        eventId: string;
      };
      expect(verdict.reasons.join(" "), `attempt ${i}`).not.toContain("could not complete its checks");
      const event = await t.store.events.get("camp", verdict.eventId);
      return { ...verdict, findings: ((event?.signals.findings ?? []) as { id: string }[]).map((f) => f.id) };
    };
    // People before: each their own device.
    for (let i = 0; i < 20; i++) {
      const person = await attempt(i, { ...WINDOWS_DEVICE, canvas: `a${i}`, screen: `${1200 + i}x800` });
      expect(person.findings).not.toContain("campaign_surge");
      expect(person.decision).toBe("allow");
    }
    // The campaign: one environment, a network each.
    const campaign = [];
    for (let i = 20; i < 50; i++) campaign.push(await attempt(i, WINDOWS_DEVICE));
    const surged = campaign.filter((a) => a.findings.includes("campaign_surge"));
    expect(campaign.slice(0, 5).every((a) => !a.findings.includes("campaign_surge"))).toBe(true);
    expect(surged.length).toBeGreaterThanOrEqual(campaign.length - 6);
    // An environment the day before did not have, a network each: one machine's browsers, refused
    // as automation (a proof of work is no friction to them).
    expect(surged.every((a) => a.decision === "deny" && a.actorType === "agent_abusive")).toBe(true);
    expect(surged[0]?.reasons.join(" ")).toMatch(/one browser environment.*one machine's browsers/);
    // A person on another device meanwhile is not part of it.
    const after = await attempt(60, { ...WINDOWS_DEVICE, canvas: "ffff", screen: "1536x864" });
    expect(after.findings).not.toContain("campaign_surge");
    expect(after.decision).toBe("allow");
  });
});

describe("deny lists of a campaign's setup: environments, TLS fingerprints, user agents", () => {
  it("deny an attempt whose environment, fingerprint or user agent is listed, and nothing else", async () => {
    await t.tenant("lists");
    const key = (await t.key("lists")).apiKey;
    // The digest an event records for this environment (what the console's campaigns show).
    const digest = environmentDigest(WINDOWS_DEVICE) as string;
    const ja4 = "t13d1516h2_8daaf6152771_d8a2da3f94cd";
    const odd =
      "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Campaign/1";
    await t.store.policies.put(
      "lists",
      JSON.stringify({ deny: { environments: [digest], tlsFingerprints: [ja4], userAgents: [odd] } }),
      now,
    );
    const verdict = async (i: number, subject: Record<string, unknown>) => {
      const res = await t.app.inject({
        method: "POST",
        url: "/v1/verify",
        headers: bearer(key),
        payload: {
          action: "signup",
          session: `l-${i}`,
          subject: { ipTrunc: `198.18.${i}.0/24`, ...subject },
        },
      });
      return res.json() as { decision: string; reasons: string[] };
    };
    const person = { userAgent: CHROME_UA, headers: CHROME_HEADERS };
    const env = await verdict(1, { ...person, page: { environment: WINDOWS_DEVICE } });
    expect(env.decision).toBe("deny");
    expect(env.reasons.join(" ")).toMatch(/browser environment/);
    const tls = await verdict(2, { ...person, tls: { ja4 } });
    expect(tls.decision).toBe("deny");
    const ua = await verdict(3, { userAgent: odd, headers: { ...CHROME_HEADERS, "user-agent": odd } });
    expect(ua.decision).toBe("deny");
    const other = await verdict(4, {
      ...person,
      page: { environment: { ...WINDOWS_DEVICE, canvas: "beef" } },
    });
    expect(other.decision).toBe("allow");
  });

  it("are refused on the allow side: a client would allow itself", () => {
    for (const kind of ["environments", "tlsFingerprints", "userAgents", "shapes"]) {
      const value = kind === "environments" || kind === "shapes" ? "0".repeat(32) : "x";
      const parsed = compilePolicy({ allow: { [kind]: [value] } }, "v1");
      expect(parsed.ok).toBe(false);
      expect(JSON.stringify(parsed)).toContain(`allow.${kind}: a client chooses its ${kind}`);
      expect(compilePolicy({ deny: { [kind]: [value] } }, "v1").ok).toBe(true);
    }
  });
});

describe("friction priced to a campaign", () => {
  it("a challenge on a surging attempt is sealed at the severe tier, whatever the caller asks", async () => {
    // One network's identical devices (an office): the plain surge, a challenge.
    await t.tenant("priced");
    await t.store.policies.put("priced", JSON.stringify({}), now);
    const key = (await t.key("priced", { scopes: ["verify:write", "challenge:write"] })).apiKey;
    let last: { decision: string; eventId: string } | undefined;
    for (let i = 0; i < 12; i++) {
      now += 5_000;
      const res = await t.app.inject({
        method: "POST",
        url: "/v1/verify",
        headers: bearer(key),
        payload: {
          action: "signup",
          session: `priced-${i}`,
          subject: {
            userAgent: CHROME_UA,
            ipTrunc: "203.1.0.0/24",
            headers: CHROME_HEADERS,
            page: { environment: WINDOWS_DEVICE },
          },
        },
      });
      last = res.json();
    }
    expect(last?.decision).toBe("challenge");
    const issued = await t.app.inject({
      method: "POST",
      url: "/v1/challenge",
      headers: bearer(key),
      payload: { eventId: last?.eventId, session: "priced-11", context: { riskTier: "default" } },
    });
    expect(issued.statusCode).toBe(200);
    expect(issued.json().instructions.difficulty).toBe(6);
  });
});
