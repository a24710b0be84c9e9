import {
  bindingTag,
  openPageToken,
  type PageTokenClaims,
  powSeed,
  probeSeed,
} from "../../../tokens/pageToken.js";
import type { ReasonCategory } from "../reasonCodes.js";
import { capJointly, type Finding } from "./findings.js";
import type { Signal } from "./signal.js";

/**
 * Evidence that the form's page ran (subject.page): a page token Warden issued when the page loaded
 * (tokens/pageToken.ts) and what `@warden/browser` saw of the person filling the form in.
 *
 * What the server knows for itself weighs most: whether the token is Warden's, for this tenant, and
 * how long ago it was issued (a form cannot be read and filled in less than `minFillMs`). The
 * behaviour counts come from the page, which a bot controls, so only counts that incriminate are
 * read: a clean report proves nothing.
 */

/** What `@warden/browser`'s behaviour watcher counts between page load and submit (all trusted events unless named). */
export interface PageBehaviour {
  /** Milliseconds from the page's script start to the submit, as the page measured them. */
  elapsedMs?: number;
  /** Key presses (keydown). */
  keys?: number;
  /** Text inputs that arrived without a key press since the previous input (a program's insertText). */
  inserted?: number;
  /** Pastes and drops into a field. */
  pasted?: number;
  /** Other input, such as the browser's autofill or a password manager's replacement text. */
  autofilled?: number;
  /** Mouse or pen movements. */
  pointerMoves?: number;
  /** Mouse or pen presses. */
  clicks?: number;
  /** Touches. */
  touches?: number;
  /** Key, pointer and input events a script dispatched (isTrusted false). */
  untrusted?: number;
}

export type PageToken =
  | { state: "absent" }
  | { state: "invalid" }
  | {
      state: "valid";
      claims: PageTokenClaims;
      ageMs: number;
      /** The seed of its layout probe (tokens/pageToken.ts probeSeed), when it was handed one. */
      probeSeed?: string;
      /** The seed a challenge on the attempt is sealed with (tokens/pageToken.ts powSeed). */
      powSeed: string;
    };

export interface PageEvidenceWeights {
  missing: number;
  invalid: number;
  fast: number;
  expired: number;
  otherNetwork: number;
  otherUserAgent: number;
  inputWithoutKeys: number;
  pointerTeleported: number;
  syntheticEvents: number;
  /** The most the behaviour findings add together. */
  behaviourCap: number;
}

/** What verify needs to read a page token: the key of a published signing key, by kid. */
export type PageKeyLookup = (kid: string) => Buffer | undefined;

/** Clock skew tolerated between the process that issued a token and the one that reads it. */
const SKEW_MS = 5_000;

/** Reads subject.page.token: Warden's, for this tenant, not from the future. */
export function readPageToken(page: unknown, keyOf: PageKeyLookup, tenantId: string, now: number): PageToken {
  const token = (page as { token?: unknown } | undefined)?.token;
  if (typeof token !== "string") return { state: "absent" };
  const claims = openPageToken(token, keyOf);
  if (!claims || claims.tenantId !== tenantId || claims.issuedAt > now + SKEW_MS) return { state: "invalid" };
  const ageMs = Math.max(0, now - claims.issuedAt);
  // The key opened the token, so it is there: the kid is the token's second part.
  const key = keyOf(token.split(".")[1] ?? "");
  if (!key) return { state: "invalid" };
  return {
    state: "valid",
    claims,
    ageMs,
    powSeed: powSeed(key, claims.nonce),
    ...(claims.probe && { probeSeed: probeSeed(key, claims.nonce) }),
  };
}

/** The binding of a page token to its request: short hashes of the network and user agent. */
export const pageBinding = (network: string | undefined, userAgent: string | undefined) => ({
  network: bindingTag(network),
  userAgent: bindingTag(userAgent),
});

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const count = (value: unknown): number =>
  typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;

export interface PageRules {
  /** The tenant requires page evidence for this action (policy requirePage). */
  required: boolean;
  /** The least time a person takes from page load to submit. */
  minFillMs: number;
  /** How long a page token is accepted. */
  ttlMs: number;
}

/** Findings of the page token and of the page's behaviour report. */
export function pageEvidenceFindings(
  token: PageToken,
  behaviour: unknown,
  /** The verify's own network and user agent, hashed only when a valid token is there to compare. */
  request: { network: string | undefined; userAgent: string | undefined },
  rules: PageRules,
  w: PageEvidenceWeights,
): Finding[] {
  if (token.state === "absent") {
    return rules.required
      ? [
          {
            id: "page_evidence_missing",
            logOdds: w.missing,
            reason:
              "The attempt carries no page token: the form's page never ran, so a program sent the form without a browser.",
            automation: true,
          },
        ]
      : [];
  }
  if (token.state === "invalid") {
    return [
      {
        id: "page_token_invalid",
        logOdds: w.invalid,
        reason: "The page token is not one Warden issued to this tenant: it was forged or altered.",
        automation: true,
      },
    ];
  }
  const findings: Finding[] = [];
  const { claims, ageMs } = token;
  const binding = pageBinding(request.network, request.userAgent);
  if (ageMs < rules.minFillMs) {
    findings.push({
      id: "page_submitted_fast",
      logOdds: w.fast,
      reason: `The form was sent ${seconds(ageMs)} after its page loaded, faster than a person reads and fills it in (${seconds(rules.minFillMs)}).`,
      automation: true,
    });
  } else if (ageMs > rules.ttlMs) {
    findings.push({
      id: "page_token_expired",
      logOdds: w.expired,
      reason: `The page token is ${Math.round(ageMs / 3_600_000)} h old, past its lifetime: the page was loaded long before the form was sent.`,
    });
  }
  // A binding is compared whatever side is empty: a token asked for without a user agent or network
  // binds the attempt to having none, never to any.
  if (claims.userAgent !== binding.userAgent) {
    findings.push({
      id: "page_other_user_agent",
      logOdds: w.otherUserAgent,
      reason: "The page token was issued to a browser with another user agent than the one sending the form.",
    });
  }
  if (claims.network !== binding.network) {
    findings.push({
      id: "page_other_network",
      logOdds: w.otherNetwork,
      reason: "The page token was issued to another network than the one sending the form.",
    });
  }
  findings.push(...behaviourFindings(behaviour, w));
  return findings;
}

/**
 * What the page's own report incriminates (it can lie, so nothing here lowers the risk). Raises the
 * risk without calling the attempt automation: dictation inserts text without keys and voice control
 * clicks without moving the pointer, and people who rely on them must meet a challenge at worst,
 * never a refusal on this alone. What the server measures itself (the page's age) is automation.
 */
function behaviourFindings(behaviour: unknown, w: PageEvidenceWeights): Finding[] {
  if (typeof behaviour !== "object" || behaviour === null) return [];
  const b = behaviour as Record<string, unknown>;
  const findings: Finding[] = [];
  if (count(b.inserted) > 0 && count(b.keys) === 0 && count(b.pasted) === 0 && count(b.autofilled) === 0) {
    findings.push({
      id: "page_input_without_keys",
      logOdds: w.inputWithoutKeys,
      reason:
        "Text arrived in the form without a single key press, paste or autofill, as an automation tool's fill inserts it (or dictation).",
    });
  }
  if (count(b.clicks) > 0 && count(b.pointerMoves) <= count(b.clicks) && count(b.touches) === 0) {
    findings.push({
      id: "page_pointer_teleported",
      logOdds: w.pointerTeleported,
      reason:
        "The pointer pressed without moving there first (at most one movement per press), as an automation tool's click does (or voice control).",
    });
  }
  if (count(b.untrusted) > 0) {
    findings.push({
      id: "page_synthetic_events",
      logOdds: w.syntheticEvents,
      reason:
        "Script on the page dispatched key, pointer or input events of its own (a form filler or automation).",
    });
  }
  // Together they stay one channel's worth (behaviourCap): a voice-control user shows the first two
  // at once and must be challenged at worst, not refused for the sum.
  return capJointly(findings, () => true, w.behaviourCap);
}

/** The reason codes of this signal's findings, with their category. */
const CODES = {
  page_evidence_missing: "page",
  page_token_invalid: "page",
  page_submitted_fast: "page",
  page_token_expired: "page",
  page_other_user_agent: "page",
  page_other_network: "page",
  page_input_without_keys: "page",
  page_pointer_teleported: "page",
  page_synthetic_events: "page",
} as const satisfies Record<string, ReasonCategory>;

export const pageEvidenceSignal: Signal<keyof typeof CODES> = {
  name: "page evidence",
  codes: CODES,
  explainedByDeclaredAgent: true,
  // A page that never ran, or was not filled in by a person.
  contradictsBrowser: (f) => f.automation === true,
  findings: ({ req, pageToken, network, headers, policy, model }) =>
    pageEvidenceFindings(
      pageToken,
      req.subject.page?.behaviour,
      { network: network?.text, userAgent: req.subject.userAgent ?? headers?.["user-agent"] },
      {
        required: policy.requirePage(req.action),
        minFillMs: model.pageMinFillMs,
        ttlMs: model.pageTokenTtlMs,
      },
      model.weights.page,
    ),
};
