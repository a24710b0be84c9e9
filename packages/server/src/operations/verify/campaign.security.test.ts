import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, CHROME_HEADERS, CHROME_UA, makeTestApp, type TestApp } from "../../testing/harness.js";
import { probeSeed } from "../../tokens/pageToken.js";
import { DEFAULT_MODEL } from "./decisionModel.js";
import { layoutProbe } from "./signals/layoutProbe.js";

/**
 * What an attacker controls of subject.page.environment and of the campaign counters: each test
 * states what must hold against a client that tries.
 */
let t: TestApp;
let now = Date.UTC(2025, 0, 10, 12);
let apiKey: string;
beforeAll(async () => {
  t = await makeTestApp({ clock: () => now });
  await t.tenant("rt");
  apiKey = (await t.key("rt")).apiKey;
});
afterAll(() => t?.close());

const PERSON = { elapsedMs: 9000, keys: 31, pointerMoves: 84, clicks: 2 };
const DEVICE = {
  screen: "1920x1080",
  colorDepth: 24,
  pixelRatio: 1,
  cores: 8,
  memory: 8,
  touchPoints: 0,
  timezone: "UTC",
  languages: "en-US",
  platform: "Win32",
  renderer: "ANGLE (NVIDIA Direct3D11)",
  canvas: "abcd",
};
/** The seed of a token's probe under the server's key: what a page's layout engine measures. */
function seedOf(pageToken: string): string {
  const key = t.deps.keyring.pageKey(pageToken.split(".")[1] ?? "") as Buffer;
  return probeSeed(key, nonceOf(pageToken));
}

const nonceOf = (token: string): string =>
  JSON.parse(Buffer.from(token.split(".")[2] as string, "base64url").toString()).n;

async function token(net: string) {
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/page-tokens",
    headers: bearer(apiKey),
    payload: { subject: { userAgent: CHROME_UA, ipTrunc: net }, probe: true },
  });
  return (res.json() as { pageToken: string }).pageToken;
}

let sessions = 0;
async function verify(
  net: string,
  environment: (probe: number[]) => Record<string, unknown>,
  measured?: (token: string) => number[],
) {
  const pageToken = await token(net);
  now += 10_000;
  // The answer a real page measures (computed here with the server's own generator).
  const probe = measured ? measured(pageToken) : [...layoutProbe(seedOf(pageToken)).expected];
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/verify",
    headers: bearer(apiKey),
    payload: {
      action: "signup",
      session: `c${++sessions}`,
      subject: {
        userAgent: CHROME_UA,
        ipTrunc: net,
        headers: { ...CHROME_HEADERS },
        page: { token: pageToken, behaviour: PERSON, environment: environment(probe) },
      },
    },
  });
  expect(res.statusCode).toBe(200);
  const verdict = res.json() as { decision: string; actorType: string; eventId: string };
  const event = await t.store.events.get("rt", verdict.eventId);
  const findings = ((event?.signals.findings ?? []) as { id: string }[]).map((f) => f.id);
  return { decision: verdict.decision, actorType: verdict.actorType, findings };
}

const surged = (v: { findings: string[] }) => v.findings.includes("campaign_surge");

describe("campaign counters against what an attacker controls", () => {
  it("a campaign whose forms answer the probe but leave out every device fact still counts as one setup", async () => {
    // The same 30 attempts with the device facts surge from the 6th (the environment is new to the
    // baseline); leaving the facts out (only `probe`) gives no environment digest, so no key at all.
    now += 2 * 86_400_000;
    let withFacts = 0;
    for (let i = 0; i < 30; i++)
      if (surged(await verify(`203.0.${i}.0/24`, (probe) => ({ ...DEVICE, probe })))) withFacts++;
    expect(withFacts).toBeGreaterThan(20);
    now += 2 * 86_400_000;
    let withoutFacts = 0;
    for (let i = 0; i < 30; i++)
      if (surged(await verify(`203.1.${i}.0/24`, (probe) => ({ probe })))) withoutFacts++;
    expect(withoutFacts).toBeGreaterThan(20);
  });

  it("a client that never laid the page out cannot answer the probe from the token alone", async () => {
    // The token's payload is base64url JSON (not encrypted): its nonce seeds the public generator.
    now += 2 * 86_400_000;
    const v = await verify(
      "192.0.2.0/24",
      (probe) => ({ probe }),
      (pageToken) => [...layoutProbe(nonceOf(pageToken)).expected],
    );
    expect(v.findings).toContain("page_engine_absent");
  });
});

describe("one machine's browsers across networks", () => {
  const { floor } = DEFAULT_MODEL.campaign;

  it("are refused from the floor on as automation, while a person on another device is allowed", async () => {
    now += 2 * 86_400_000;
    const machine = (probe: number[]) => ({ ...DEVICE, canvas: "0e1d2c3b", probe });
    const campaign = [];
    for (let i = 0; i < 12; i++) campaign.push(await verify(`198.51.${i}.0/24`, machine));
    expect(campaign.slice(0, floor - 1).map((v) => v.decision)).not.toContain("deny");
    for (const v of campaign.slice(floor - 1)) {
      expect(v).toMatchObject({ decision: "deny", actorType: "agent_abusive" });
      expect(v.findings).toContain("campaign_surge");
    }
    // A person signing up meanwhile, on a device of their own.
    const person = await verify("198.51.200.0/24", (probe) => ({ ...DEVICE, canvas: "7a6b5c4d", probe }));
    expect(person.decision).toBe("allow");
  });

  it("an office signing up together from one network on identical laptops is challenged, never refused", async () => {
    now += 2 * 86_400_000;
    const laptops = (probe: number[]) => ({ ...DEVICE, canvas: "3f3f9a9a", probe });
    const office = [];
    for (let i = 0; i < floor + 2; i++) office.push(await verify("198.51.150.0/24", laptops));
    expect(office.map((v) => v.decision)).not.toContain("deny");
    expect(office.at(-1)).toMatchObject({ decision: "challenge" });
    expect(office.at(-1)?.findings).toContain("campaign_surge");
  });
});
