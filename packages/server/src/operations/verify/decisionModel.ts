import type { CampaignRules, CampaignWeights } from "./signals/campaign.js";
import type { PageEnvironmentWeights } from "./signals/pageEnvironment.js";
import type { PageEvidenceWeights } from "./signals/pageEvidence.js";
import type { PageLanguageWeights } from "./signals/pageLanguage.js";
import type { TlsWeights } from "./signals/tlsFingerprint.js";
import type { VelocityKind, VelocityLimits, VelocityWeights } from "./signals/velocity.js";

/**
 * The decision model's version, recorded with every event: a new one with every change to the model's
 * parameters below or to what the signals find (a signal added, removed or weighed anew).
 */
export const ENGINE_VERSION = "warden-engine/10";

/**
 * Parameters of the decision model, the same for every tenant (a tenant's policy document adds lists,
 * per-action rules, velocity limits and difficulties on top). docs/decisions.md explains each number;
 * a change to them is a new ENGINE_VERSION.
 */
export interface DecisionModel {
  /** Prior probability that an attempt is abusive, before any evidence. */
  prior: number;
  /** Share of abusive attempts that get through a challenge anyway. */
  challengeLeak: number;
  /**
   * The same share for an attempt with automation evidence (a program, or a browser it drives): a
   * proof of work is solved by any browser in a fraction of a second and by a script in Node, so it
   * stops almost none of them. The deny-or-challenge choice for such attempts is priced with this.
   */
  challengeLeakAutomated: number;
  /** Half-width of the uncertainty band in log-odds, by how many evidence channels were present (0..5+). */
  spreadByChannels: readonly number[];
  weights: {
    uaMissing: number;
    uaAutomation: number;
    headersMissingPerGroup: number;
    browserConsistent: number;
    clientHintsMismatch: number;
    pageScopeMismatch: number;
    /** The most a disguised browser's contradictions (client hints, page against worker) add together. */
    disguiseCap: number;
    headerOrderOverride: number;
    /** A JSON body with a navigation's Fetch Metadata (signals/fetchMetadata.ts). */
    navigationJson: number;
    emailDisposable: number;
    emailInvalid: number;
    emailRandom: number;
    hostingNetwork: number;
    formLinkEach: number;
    formLinksCap: number;
    agentVerified: number;
    agentInvalid: number;
    agentUnverified: number;
    page: PageEvidenceWeights;
    /** What the page read of its browser (signals/pageEnvironment.ts). */
    pageEnvironment: PageEnvironmentWeights;
    /** The page's languages against Accept-Language (signals/pageLanguage.ts). */
    pageLanguage: PageLanguageWeights;
    /** A request shape or page environment surging across networks (signals/campaign.ts). */
    campaign: CampaignWeights;
    /** The client's TLS handshake against the browser it claims (signals/tlsFingerprint.ts). */
    tls: TlsWeights;
    /** Per kind: how strongly a count over its limit counts. */
    velocity: Readonly<Record<VelocityKind, VelocityWeights>>;
  };
  velocity: Readonly<Partial<Record<VelocityKind, VelocityLimits>>>;
  /** When a shape or environment's count is a campaign's (signals/campaign.ts). */
  campaign: CampaignRules;
  /** Below this risk estimate a request with consistent browser evidence is classified human. */
  humanMaxRisk: number;
  /** Tolerated clock difference for Web Bot Auth created/expires, in seconds. */
  signatureSkewSeconds: number;
  /** The least time from page load to submit a person takes (page tokens' age). */
  pageMinFillMs: number;
  /** How long a page token is accepted. */
  pageTokenTtlMs: number;
}

export const DEFAULT_MODEL: DecisionModel = Object.freeze({
  prior: 0.08,
  challengeLeak: 0.3,
  challengeLeakAutomated: 0.95,
  spreadByChannels: [1.5, 1.2, 0.9, 0.75, 0.6, 0.5],
  weights: {
    uaMissing: 2.5,
    uaAutomation: 3.5,
    headersMissingPerGroup: 1.5,
    browserConsistent: -1.0,
    clientHintsMismatch: 2.5,
    pageScopeMismatch: 3.0,
    disguiseCap: 3.5,
    headerOrderOverride: 3.0,
    navigationJson: 4.0,
    emailDisposable: 4.0,
    emailInvalid: 1.5,
    emailRandom: 1.0,
    hostingNetwork: 1.5,
    formLinkEach: 0.75,
    formLinksCap: 2.0,
    agentVerified: -1.5,
    agentInvalid: 5.0,
    agentUnverified: 1.0,
    page: {
      missing: 4.0,
      invalid: 5.0,
      fast: 4.0,
      expired: 1.0,
      otherNetwork: 1.5,
      otherUserAgent: 3.0,
      inputWithoutKeys: 3.0,
      pointerTeleported: 2.5,
      syntheticEvents: 1.5,
      behaviourCap: 3.5,
    },
    pageEnvironment: {
      // As strong as a page that never ran: the token was used without a browser engine.
      engineAbsent: 4.0,
      inconsistent: 2.5,
    },
    // A disguise's contradiction, as strong as the device facts' (and capped with them).
    pageLanguage: { mismatch: 2.5 },
    // A surge alone challenges (at the severe tier: friction priced to it), even beside a consistent
    // browser's -1.0; never a deny on its own (a person on the campaign's device class meets a
    // challenge at worst); with other evidence, deny. One machine's browsers (an environment new to
    // the tenant, from many networks) are automation: denied, a proof of work being no friction to
    // them, even beside a consistent browser.
    campaign: { surge: 4.0, perDoubling: 0.5, cap: 5.0, machine: 5.5 },
    tls: {
      library: 5.0,
      notBrowser: 4.0,
      otherBrowser: 2.5,
      unfamiliar: 1.0,
    },
    velocity: {
      ip_network: { overLimit: 1.5, perDoubling: 1.0, cap: 4.0 },
      email_hash: { overLimit: 1.5, perDoubling: 1.0, cap: 4.0 },
      // Variants of one mailbox across attempts are a deliberate trick, not an accident.
      email_normalized: { overLimit: 3.0, perDoubling: 1.0, cap: 5.0 },
      // Colleagues sign up together: a busy business domain is weak evidence.
      email_domain: { overLimit: 1.0, perDoubling: 0.5, cap: 2.0 },
      session: { overLimit: 1.5, perDoubling: 1.0, cap: 3.0 },
      // People reuse stock phrases: repeated text is weak evidence on its own.
      form_value: { overLimit: 1.0, perDoubling: 0.5, cap: 2.0 },
      // A page token serves one attempt and its retries: many attempts on one are a replay.
      page_token: { overLimit: 4.0, perDoubling: 1.0, cap: 6.0 },
    },
  },
  velocity: {
    // Each window is a counter row per key and request: a minute window for networks and sessions
    // was measured to cost more throughput than it catches (a burst passes the hourly limit too).
    ip_network: { perHour: 30, perDay: 200 },
    email_hash: { perHour: 3, perDay: 10 },
    email_normalized: { perHour: 2, perDay: 4 },
    email_domain: { perHour: 50, perDay: 300 },
    session: { perHour: 20 },
    form_value: { perHour: 10, perDay: 50 },
    page_token: { perHour: 4 },
  },
  campaign: {
    floor: 6,
    ratio: 4,
    chance: 1e-4,
    environmentPriorShare: 0.05,
    priorWeight: 200,
    shapeMinBaseline: 500,
  },
  humanMaxRisk: 0.2,
  signatureSkewSeconds: 60,
  pageMinFillMs: 1_500,
  pageTokenTtlMs: 12 * 3_600_000,
});
