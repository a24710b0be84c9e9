import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, CHROME_HEADERS, CHROME_UA, makeTestApp, type TestApp } from "../../../testing/harness.js";
import { DEFAULT_MODEL } from "../decisionModel.js";
import { normaliseHeaders } from "./browserHeaders.js";
import type { PageEnvironment } from "./pageEnvironment.js";
import { pageLanguageSignal } from "./pageLanguage.js";
import type { RequestView } from "./signal.js";
import { readUserAgent } from "./userAgent.js";

/** The signal alone, on the parts of the view it reads. */
function findings(acceptLanguage: string | undefined, languages: string | undefined, extra = {}) {
  const { "accept-language": _, ...others } = CHROME_HEADERS;
  const headers = normaliseHeaders({
    ...others,
    ...(acceptLanguage === undefined ? {} : { "accept-language": acceptLanguage }),
    ...extra,
  });
  const view = {
    headers,
    environment: languages === undefined ? undefined : ({ languages } as PageEnvironment),
    ua: readUserAgent(CHROME_UA),
    model: DEFAULT_MODEL,
  } as RequestView;
  return pageLanguageSignal.findings(view);
}

describe("the page's languages against Accept-Language", () => {
  it("a browser's own pair agrees: nothing (a region, q-values, a reduced header, another order of subtags)", () => {
    for (const [header, page] of [
      ["en-US,en;q=0.9", "en-US,en"],
      ["de-DE,de;q=0.9,en-US;q=0.8,en;q=0.7", "de-DE,de,en-US,en"],
      ["en-GB", "en-US,en"],
      ["fr", "fr-FR"],
      ["pt-BR,pt;q=0.9", "pt-BR,pt,en"],
      ["zh-CN,zh;q=0.9", "zh-CN"],
      ["EN-us", "en"],
    ] as const) {
      expect(findings(header, page), `${header} / ${page}`).toEqual([]);
    }
  });

  it("a header whose first language the page does not list: a disguise's contradiction, with its weight", () => {
    for (const [header, page] of [
      ["en-US,en;q=0.9", "de-DE,de"],
      ["ru-RU,ru;q=0.9,en;q=0.8", "en-US,en"],
      // The page's second language does not excuse the header's first.
      ["en-US,en;q=0.9", "ja-JP,ja"],
    ] as const) {
      const [finding, ...rest] = findings(header, page);
      expect(rest).toEqual([]);
      expect(finding).toMatchObject({
        id: "page_language_mismatch",
        logOdds: DEFAULT_MODEL.weights.pageLanguage.mismatch,
        story: "disguise",
      });
      expect(pageLanguageSignal.contradictsBrowser?.(finding as never)).toBe(true);
    }
  });

  it("says nothing without both, or without a language to compare (a wildcard, garbage, an empty list)", () => {
    expect(findings(undefined, "de-DE")).toEqual([]);
    expect(findings("en-US", undefined)).toEqual([]);
    expect(findings("*", "de-DE")).toEqual([]);
    expect(findings("en-US", "")).toEqual([]);
    expect(findings("en-US", ",,")).toEqual([]);
    expect(findings("<script>", "de-DE")).toEqual([]);
  });

  it("echoes no text the client sent beyond a language's primary subtag", () => {
    const [finding] = findings("en-US", `de-DE,${"x".repeat(300)},<b>,fr`);
    expect(finding?.reason).toContain("(en)");
    expect(finding?.reason).toContain("(de, fr)");
    expect(finding?.reason).not.toContain("<b>");
  });
});

describe("through verify", () => {
  let t: TestApp;
  let apiKey: string;
  beforeAll(async () => {
    t = await makeTestApp();
    await t.tenant("lang");
    apiKey = (await t.key("lang")).apiKey;
  });
  afterAll(async () => {
    await t?.close();
  });

  const verify = async (languages: string | undefined) => {
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/verify",
      headers: bearer(apiKey),
      payload: {
        action: "signup",
        subject: {
          userAgent: CHROME_UA,
          ipTrunc: "198.51.100.0/24",
          headers: CHROME_HEADERS,
          ...(languages === undefined ? {} : { page: { environment: { languages } } }),
        },
      },
    });
    expect(res.statusCode).toBe(200);
    const verdict = res.json() as { decision: string; eventId: string; reasons: string[] };
    const event = await t.store.events.get("lang", verdict.eventId);
    return { ...verdict, findings: (event?.signals.findings ?? []) as { id: string; logOdds: number }[] };
  };
  const RANK: Record<string, number> = { allow: 0, challenge: 1, deny: 2 };

  it("a page report in another language than the headers adds the finding and its reason; one in the same changes nothing", async () => {
    const without = await verify(undefined);
    const same = await verify("en-US,en");
    const other = await verify("de-DE,de");
    expect(same.findings).toEqual(without.findings);
    expect(same.decision).toBe(without.decision);
    expect(other.findings).toContainEqual({
      id: "page_language_mismatch",
      logOdds: DEFAULT_MODEL.weights.pageLanguage.mismatch,
    });
    // The headers are not the page's browser's: their consistency takes nothing off.
    expect(other.findings.map((f) => f.id)).not.toContain("browser_consistent");
    expect(RANK[other.decision]).toBeGreaterThanOrEqual(RANK[without.decision] as number);
    expect(other.reasons.some((r) => r.includes("does not list (de)"))).toBe(true);
  });
});
