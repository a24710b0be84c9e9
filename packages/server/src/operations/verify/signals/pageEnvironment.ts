import { sha256Hex } from "../../../lib/crypto.js";
import type { ReasonCategory } from "../reasonCodes.js";
import type { VerifyRequest } from "../schema.js";
import type { Finding } from "./findings.js";
import { layoutProbe, probeAnswered } from "./layoutProbe.js";
import type { PageToken } from "./pageEvidence.js";
import type { Signal } from "./signal.js";
import type { UserAgentSignal } from "./userAgent.js";

/**
 * What the page's script read of the browser it runs in (subject.page.environment, @warden/browser
 * watchPage): the measurements of its token's layout probe, and a few facts of the device and engine.
 *
 * Two uses. The probe answers whether a browser engine laid out the page: a token handed out with a
 * probe (POST /v1/page-tokens with `probe`) binds the form to measuring it, and a form without the
 * measurements, or with another probe's, was sent by a client that has no layout to measure. The
 * facts are read for what contradicts the user agent (a phone without touch, a GPU of another
 * platform), and hashed into the environment digest that campaign.ts counts across networks. A page
 * can report anything, so nothing here lowers the risk.
 */

/** subject.page.environment as the schema admits it (verify's schema.ts is its one definition). */
export type PageEnvironment = NonNullable<NonNullable<VerifyRequest["subject"]["page"]>["environment"]>;

export interface PageEnvironmentWeights {
  /** A probed token's form without the probe's measurements. */
  engineAbsent: number;
  /** Device facts that contradict the user agent. */
  inconsistent: number;
}

/** The environment a request carries, or undefined. */
export function readEnvironment(page: unknown): PageEnvironment | undefined {
  const env = (page as { environment?: unknown } | undefined)?.environment;
  return typeof env === "object" && env !== null && !Array.isArray(env)
    ? (env as PageEnvironment)
    : undefined;
}

/**
 * The digest of an environment: what the device and engine show, the same for every attempt from one
 * setup (a replayed report, one machine's browser profiles) and shared by people with one device model.
 * A canvas read back with noise (privacy modes and anti-fingerprinting tools randomise it) is left out
 * so that the noise does not make every attempt new. Undefined without an environment.
 */
export function environmentDigest(env: PageEnvironment | undefined): string | undefined {
  if (!env) return undefined;
  const parts = [
    env.screen,
    env.colorDepth,
    env.pixelRatio,
    env.cores,
    env.memory,
    env.touchPoints,
    env.timezone,
    env.languages,
    env.platform,
    env.renderer,
    env.canvasNoise ? "noise" : env.canvas,
  ].map((v) => (v === undefined ? "" : String(v)));
  if (parts.every((p) => p === "")) return undefined;
  return sha256Hex(`warden-environment:${parts.join("\n")}`).slice(0, 32);
}

const MOBILE_OS = new Set(["iOS", "Android"]);
/** GPU names that only one platform ships, by the platforms that may show them. */
const GPU_PLATFORMS: readonly { gpu: RegExp; os: ReadonlySet<string> }[] = [
  { gpu: /Direct3D|D3D11|D3D9/i, os: new Set(["Windows"]) },
  { gpu: /Apple (M\d|GPU)|Apple A\d/i, os: new Set(["Mac OS", "macOS", "iOS"]) },
  // Qualcomm's Adreno is also Windows on Arm's (Snapdragon 8cx, X Elite laptops: "Adreno … Direct3D11").
  { gpu: /Adreno/i, os: new Set(["Android", "Linux", "Chromium OS", "Chrome OS", "Windows"]) },
  { gpu: /Mali-|PowerVR|Xclipse/i, os: new Set(["Android", "Linux", "Chromium OS", "Chrome OS"]) },
];

/** What of the environment contradicts the user agent's platform, as display text; undefined if nothing. */
function contradiction(env: PageEnvironment, ua: UserAgentSignal): string | undefined {
  const os = ua.os;
  if (!os) return undefined;
  if (MOBILE_OS.has(os) && env.touchPoints === 0) {
    return `The user agent names a phone or tablet (${os}), but the page reports a screen without touch.`;
  }
  if (env.renderer) {
    for (const { gpu, os: platforms } of GPU_PLATFORMS) {
      if (gpu.test(env.renderer) && !platforms.has(os)) {
        return `The page reports a graphics processor (${env.renderer.slice(0, 80)}) that ${os} does not have.`;
      }
    }
  }
  return undefined;
}

export function pageEnvironmentFindings(
  token: PageToken,
  env: PageEnvironment | undefined,
  ua: UserAgentSignal,
  w: PageEnvironmentWeights,
): Finding[] {
  const findings: Finding[] = [];
  if (token.state === "valid" && token.claims.probe) {
    const expected = token.probeSeed === undefined ? [] : layoutProbe(token.probeSeed).expected;
    if (!probeAnswered(env?.probe, expected)) {
      findings.push({
        id: "page_engine_absent",
        logOdds: w.engineAbsent,
        reason:
          env?.probe === undefined
            ? "The page token came with a layout to measure and the form carries no measurements: the page was never laid out by a browser."
            : "The form's layout measurements are not those of its page token's layout: they were made up or copied from another page.",
        automation: true,
      });
    }
  }
  const contradicted = env && contradiction(env, ua);
  if (contradicted) {
    findings.push({
      id: "page_environment_inconsistent",
      logOdds: w.inconsistent,
      reason: contradicted,
      story: "disguise",
    });
  }
  return findings;
}

const CODES = {
  page_engine_absent: "page",
  page_environment_inconsistent: "page",
} as const satisfies Record<string, ReasonCategory>;

export const pageEnvironmentSignal: Signal<keyof typeof CODES> = {
  name: "page environment",
  codes: CODES,
  explainedByDeclaredAgent: true,
  contradictsBrowser: (f) => f.automation === true,
  findings: ({ environment, pageToken, ua, model }) =>
    pageEnvironmentFindings(pageToken, environment, ua, model.weights.pageEnvironment),
};
