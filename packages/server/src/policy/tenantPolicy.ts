import type { X509Certificate } from "node:crypto";
import { type Static, Type } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import ipaddr from "ipaddr.js";
import { RETENTION_DAYS_RANGE } from "../domain.js";
import { asciiDomain, DOMAIN_NAME } from "../lib/domainName.js";
import { canonicalIPv4 } from "../lib/ipText.js";
import { type AgentHosts, compileAgentHosts } from "../webBotAuth/agentHosts.js";
import { compileTrustAnchors } from "./trustAnchors.js";

/**
 * A tenant's policy document: its allow and deny lists, per-action settings, velocity limits and
 * proof-of-work difficulties. Versioned by the store (v1, v2, …); every event records the version it
 * was decided under. `warden policy get|set` manages it; docs/api.md documents every member.
 */

const Lists = Type.Object(
  {
    networks: Type.Optional(Type.Array(Type.String(), { maxItems: 10_000 })),
    emailDomains: Type.Optional(Type.Array(Type.String(), { maxItems: 10_000 })),
    emailHashes: Type.Optional(
      Type.Array(Type.String({ pattern: "^[0-9a-fA-F]{64}$" }), { maxItems: 10_000 }),
    ),
    agentOperators: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 1_000 })),
    // What a client chooses itself, for deny lists only (a campaign's setup, from the console's
    // campaigns): an allow list of these would let a client allow itself.
    environments: Type.Optional(Type.Array(Type.String({ pattern: "^[0-9a-f]{32}$" }), { maxItems: 10_000 })),
    tlsFingerprints: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { maxItems: 10_000 }),
    ),
    userAgents: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), { maxItems: 10_000 }),
    ),
    shapes: Type.Optional(Type.Array(Type.String({ pattern: "^[0-9a-f]{32}$" }), { maxItems: 10_000 })),
  },
  { additionalProperties: false },
);

/** List kinds that name what a client chooses: deny lists only. */
const DENY_ONLY_KINDS = ["environments", "tlsFingerprints", "userAgents", "shapes"] as const;

export const VERIFIED_AGENT_RULES = ["score", "allow", "challenge", "deny"] as const;
export type VerifiedAgentRule = (typeof VERIFIED_AGENT_RULES)[number];

const Weight = Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000 }));
/**
 * The tenant's default decisionCosts (docs/api.md#tenant-policy): a field the request's context
 * leaves out or sends invalid comes from here (the action's, then the tenant's), then from 1, 1, 3.
 */
const DecisionCostsSetting = Type.Object(
  { falseAllow: Weight, falseChallenge: Weight, falseDeny: Weight },
  { additionalProperties: false },
);
export type DecisionCostsSetting = Static<typeof DecisionCostsSetting>;

const ActionSettings = Type.Object(
  {
    verifiedAgents: Type.Optional(Type.Union(VERIFIED_AGENT_RULES.map((r) => Type.Literal(r)))),
    decisionCosts: Type.Optional(DecisionCostsSetting),
    requirePage: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const Limit = Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 }));
const VelocityLimits = Type.Object(
  { perMinute: Limit, perHour: Limit, perDay: Limit },
  { additionalProperties: false },
);

export const VELOCITY_KINDS = [
  "ip_network",
  "email_hash",
  "email_normalized",
  "email_domain",
  "session",
  "form_value",
  "page_token",
] as const;
export type VelocityKind = (typeof VELOCITY_KINDS)[number];

const Difficulty = Type.Optional(Type.Integer({ minimum: 1, maximum: 8 }));

export const TenantPolicyDocument = Type.Object(
  {
    allow: Type.Optional(Lists),
    deny: Type.Optional(Lists),
    decisionCosts: Type.Optional(DecisionCostsSetting),
    requirePage: Type.Optional(
      Type.Boolean({
        description:
          "Every action's attempts must carry page evidence (subject.page.token); an action's own requirePage overrides it.",
      }),
    ),
    webBotAuthHosts: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { minItems: 1, maxItems: 1_000 }),
    ),
    retentionDays: Type.Optional(
      Type.Union(
        [
          Type.Integer({ minimum: RETENTION_DAYS_RANGE.min, maximum: RETENTION_DAYS_RANGE.max }),
          Type.Literal("forever"),
        ],
        {
          description:
            'Days this tenant\'s events are kept, then removed with everything on them; "forever" keeps them. Absent: WARDEN_RETENTION_DAYS.',
        },
      ),
    ),
    actions: Type.Optional(Type.Record(Type.String({ minLength: 1, maxLength: 128 }), ActionSettings)),
    velocity: Type.Optional(
      Type.Object(
        {
          ip_network: Type.Optional(VelocityLimits),
          email_hash: Type.Optional(VelocityLimits),
          email_normalized: Type.Optional(VelocityLimits),
          email_domain: Type.Optional(VelocityLimits),
          session: Type.Optional(VelocityLimits),
          form_value: Type.Optional(VelocityLimits),
          page_token: Type.Optional(VelocityLimits),
        },
        { additionalProperties: false },
      ),
    ),
    campaign: Type.Optional(
      Type.Object(
        {
          floor: Type.Optional(
            Type.Integer({
              minimum: 2,
              maximum: 1_000_000,
              description:
                "The fewest attempts of one request shape or page environment in ten minutes that can be a campaign (default 6).",
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    challenge: Type.Optional(
      Type.Object(
        {
          powDifficulty: Type.Optional(
            Type.Object(
              { default: Difficulty, elevated: Difficulty, severe: Difficulty },
              { additionalProperties: false },
            ),
          ),
          webBotAuthStepUp: Type.Optional(Type.Boolean()),
          deviceAttestation: Type.Optional(
            Type.Object(
              {
                rpId: Type.String({ minLength: 1, maxLength: 253 }),
                origins: Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), {
                  minItems: 1,
                  maxItems: 16,
                }),
                attestation: Type.Optional(
                  Type.Union([Type.Literal("none"), Type.Literal("direct")], {
                    description:
                      "none (default): possession of an authenticator's key; direct: also an attestation statement whose certificate chain reaches one of trustAnchors.",
                  }),
                ),
                trustAnchors: Type.Optional(
                  Type.Array(Type.String({ minLength: 1, maxLength: 16_384 }), {
                    maxItems: 64,
                    description:
                      "PEM certificates (roots or intermediates) an attestation chain must reach in direct mode.",
                  }),
                ),
              },
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type TenantPolicyDocument = Static<typeof TenantPolicyDocument>;

const checker = TypeCompiler.Compile(TenantPolicyDocument);

/** Spec, Limits: 4 by default, 5 elevated, 6 severe; a policy may raise them, never lower them. */
export const BASE_POW_DIFFICULTY = Object.freeze({ default: 4, elevated: 5, severe: 6 });
export type RiskTier = keyof typeof BASE_POW_DIFFICULTY;
export const RISK_TIERS = Object.keys(BASE_POW_DIFFICULTY) as readonly RiskTier[];

export interface NetworkRule {
  text: string;
  range: [ipaddr.IPv4 | ipaddr.IPv6, number];
}

export interface ListSet {
  networks: NetworkRule[];
  emailDomains: ReadonlySet<string>;
  emailHashes: ReadonlySet<string>;
  agentOperators: ReadonlySet<string>;
  /** Environment digests as events record them (deny only). */
  environments: ReadonlySet<string>;
  /** JA4 fingerprints (deny only). */
  tlsFingerprints: ReadonlySet<string>;
  /** Exact user agents (deny only). */
  userAgents: ReadonlySet<string>;
  /** Request-shape digests as events record them (deny only). */
  shapes: ReadonlySet<string>;
}

/** A validated document, compiled for the verify path. */
export interface TenantPolicy {
  /** "default" when the tenant never set a document, otherwise "v<n>". */
  version: string;
  allow: ListSet;
  deny: ListSet;
  verifiedAgents(action: string): VerifiedAgentRule;
  /**
   * The tenant's default weights for an action: the action's fields over the tenant's; without an
   * action (a read across the tenant's actions), the tenant's.
   */
  decisionCosts(action: string | undefined): DecisionCostsSetting;
  /** Whether attempts at an action must carry page evidence (subject.page). */
  requirePage(action: string): boolean;
  velocity: NonNullable<TenantPolicyDocument["velocity"]>;
  /** The tenant's campaign floor (signals/campaign.ts); undefined: the model's. */
  campaignFloor: number | undefined;
  powDifficulty: Readonly<Record<RiskTier, number>>;
  /** The hosts a Web Bot Auth signature must have been made for; undefined: any host (not bound). */
  webBotAuthHosts: AgentHosts | undefined;
  webBotAuthStepUp: boolean;
  /** The WebAuthn relying party for device_attestation; undefined: the method is not issuable. */
  deviceAttestation: DeviceAttestationSettings | undefined;
  /** Days the tenant's events are kept, or "forever"; undefined: the deployment's WARDEN_RETENTION_DAYS. */
  retentionDays: TenantRetention;
}

export type TenantRetention = number | "forever" | undefined;

export interface DeviceAttestationSettings {
  rpId: string;
  origins: readonly string[];
  attestation: "none" | "direct";
  /** Absent: none configured, so direct mode refuses every registration (nothing to chain to). */
  trustAnchors?: readonly X509Certificate[];
}

export type PolicyParse = { ok: true; policy: TenantPolicy } | { ok: false; errors: string[] };

/** IPv4-mapped IPv6 (::ffff:0:0/96): its last 32 bits are the IPv4 address. */
const MAPPED_PREFIX = 96;

/**
 * A rule's range. Verify reads an IPv4-mapped IPv6 address as the IPv4 address it carries
 * (operations/verify/signals/ip.ts), so a rule written in that form is read the same way: prefix −96.
 */
function parseNetwork(text: string): { range: NetworkRule["range"] } | { why: string } {
  const notNetwork = { why: "is not an IP address or CIDR network" };
  let range: NetworkRule["range"];
  if (!canonicalIPv4(text.trim().split("/")[0] ?? "")) {
    return { why: "is not written as four decimal numbers (no leading zeros, octal or hex parts)" };
  }
  try {
    const t = text.trim();
    if (t.includes("/")) range = ipaddr.parseCIDR(t);
    else {
      const addr = ipaddr.parse(t);
      range = [addr, addr.kind() === "ipv4" ? 32 : 128];
    }
  } catch {
    return notNetwork;
  }
  const [addr, bits] = range;
  if (addr.kind() === "ipv6" && (addr as ipaddr.IPv6).isIPv4MappedAddress()) {
    if (bits < MAPPED_PREFIX) {
      return {
        why: `is an IPv4-mapped network shorter than /${MAPPED_PREFIX}, which reaches beyond IPv4: write it as an IPv4 network`,
      };
    }
    return { range: [(addr as ipaddr.IPv6).toIPv4Address(), bits - MAPPED_PREFIX] };
  }
  return { range };
}

function compileLists(lists: Static<typeof Lists> | undefined, path: string, errors: string[]): ListSet {
  const networks: NetworkRule[] = [];
  for (const [i, text] of (lists?.networks ?? []).entries()) {
    const parsed = parseNetwork(text);
    if ("range" in parsed) networks.push({ text, range: parsed.range });
    else errors.push(`${path}.networks[${i}]: ${JSON.stringify(text)} ${parsed.why}`);
  }
  // As verify reads an address's domain (lib/domainName.ts): a Unicode or root-dotted entry matches.
  const domains = (lists?.emailDomains ?? []).map(asciiDomain);
  for (const [i, d] of domains.entries()) {
    if (!DOMAIN_NAME.test(d))
      errors.push(`${path}.emailDomains[${i}]: ${JSON.stringify(d)} is not a domain name`);
  }
  // Operator names are trimmed where they are registered (warden agent add), so they are here too.
  const operators = (lists?.agentOperators ?? []).map((name) => name.trim());
  for (const [i, name] of operators.entries()) {
    if (name === "") errors.push(`${path}.agentOperators[${i}]: is blank (name a registered operator)`);
  }
  if (path === "allow") {
    for (const kind of DENY_ONLY_KINDS) {
      if ((lists?.[kind] ?? []).length > 0) {
        errors.push(
          `allow.${kind}: a client chooses its ${kind}, so they can only be denied (list them under deny)`,
        );
      }
    }
  }
  return {
    networks,
    emailDomains: new Set(domains),
    emailHashes: new Set((lists?.emailHashes ?? []).map((h) => h.toLowerCase())),
    agentOperators: new Set(operators),
    environments: new Set(lists?.environments ?? []),
    tlsFingerprints: new Set((lists?.tlsFingerprints ?? []).map((f) => f.trim())),
    userAgents: new Set(lists?.userAgents ?? []),
    shapes: new Set(lists?.shapes ?? []),
  };
}

/** Validates and compiles a document; every problem is reported with its path, not just the first. */
export function compilePolicy(input: unknown, version: string): PolicyParse {
  if (!checker.Check(input)) {
    const errors = [...checker.Errors(input)].slice(0, 20).map((e) => `${e.path || "/"}: ${e.message}`);
    return { ok: false, errors };
  }
  const doc = input;
  const errors: string[] = [];
  const allow = compileLists(doc.allow, "allow", errors);
  const deny = compileLists(doc.deny, "deny", errors);
  const hosts = doc.webBotAuthHosts && compileAgentHosts(doc.webBotAuthHosts, "webBotAuthHosts");
  errors.push(...(hosts?.errors ?? []));

  const given = doc.challenge?.powDifficulty ?? {};
  const pow = {
    default: given.default ?? BASE_POW_DIFFICULTY.default,
    elevated: given.elevated ?? Math.max(BASE_POW_DIFFICULTY.elevated, given.default ?? 0),
    severe: 0,
  };
  pow.severe = given.severe ?? Math.max(BASE_POW_DIFFICULTY.severe, pow.elevated);
  for (const tier of ["default", "elevated", "severe"] as const) {
    if (pow[tier] < BASE_POW_DIFFICULTY[tier]) {
      errors.push(
        `challenge.powDifficulty.${tier}: ${pow[tier]} is below the floor of ${BASE_POW_DIFFICULTY[tier]}`,
      );
    }
  }
  if (pow.elevated < pow.default || pow.severe < pow.elevated) {
    errors.push("challenge.powDifficulty: difficulties must not decrease from default to elevated to severe");
  }
  for (const [kind, limits] of Object.entries(doc.velocity ?? {})) {
    const { perMinute, perHour, perDay } = limits ?? {};
    if (perMinute && perHour && perMinute > perHour)
      errors.push(`velocity.${kind}: perMinute exceeds perHour`);
    if (perHour && perDay && perHour > perDay) errors.push(`velocity.${kind}: perHour exceeds perDay`);
  }
  const webauthn = doc.challenge?.deviceAttestation;
  const anchors =
    webauthn?.trustAnchors &&
    compileTrustAnchors(webauthn.trustAnchors, "challenge.deviceAttestation.trustAnchors", errors);
  if (webauthn) {
    const rpId = webauthn.rpId.toLowerCase();
    if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(rpId))
      errors.push(`challenge.deviceAttestation.rpId: "${webauthn.rpId}" is not a host name`);
    for (const origin of webauthn.origins) {
      let url: URL | undefined;
      try {
        url = new URL(origin);
      } catch {
        url = undefined;
      }
      // WebAuthn runs in secure contexts only: HTTPS, or http on localhost.
      const secure =
        url?.protocol === "https:" || (url?.protocol === "http:" && url.hostname === "localhost");
      const host = url?.hostname ?? "";
      if (!url || url.origin !== origin || !secure) {
        errors.push(
          `challenge.deviceAttestation.origins: "${origin}" is not an https origin (or http://localhost)`,
        );
      } else if (host !== rpId && !host.endsWith(`.${rpId}`)) {
        errors.push(`challenge.deviceAttestation.origins: "${origin}" is not on the RP id ${rpId}`);
      }
    }
  }
  if (errors.length > 0) return { ok: false, errors };

  const actions = doc.actions ?? {};
  return {
    ok: true,
    policy: Object.freeze({
      version,
      allow,
      deny,
      verifiedAgents: (action: string) => actions[action]?.verifiedAgents ?? "score",
      decisionCosts: (action: string | undefined) => ({
        ...doc.decisionCosts,
        ...(action === undefined ? undefined : actions[action]?.decisionCosts),
      }),
      requirePage: (action: string) => actions[action]?.requirePage ?? doc.requirePage ?? false,
      velocity: doc.velocity ?? {},
      campaignFloor: doc.campaign?.floor,
      powDifficulty: Object.freeze(pow),
      webBotAuthHosts: hosts?.hosts,
      webBotAuthStepUp: doc.challenge?.webBotAuthStepUp ?? false,
      retentionDays: doc.retentionDays,
      deviceAttestation: webauthn
        ? Object.freeze({
            rpId: webauthn.rpId.toLowerCase(),
            origins: Object.freeze([...webauthn.origins]),
            attestation: webauthn.attestation ?? "none",
            ...(anchors && anchors.length > 0 ? { trustAnchors: anchors } : {}),
          })
        : undefined,
    }),
  };
}

const compiledDefault = compilePolicy({}, "default");
if (!compiledDefault.ok) throw new Error("the empty policy document must compile");
/** The policy of a tenant that never set a document. */
export const DEFAULT_TENANT_POLICY: TenantPolicy = compiledDefault.policy;

/**
 * A stored version as verify applies it: compiled, or the default policy when the document no
 * longer compiles (a stricter release), with the reasons; no version stored: the default policy.
 */
export function compileStored(record: { version: number; document: string } | undefined): {
  policy: TenantPolicy;
  errors: string[];
} {
  if (!record) return { policy: DEFAULT_TENANT_POLICY, errors: [] };
  const compiled = compilePolicy(JSON.parse(record.document) as unknown, `v${record.version}`);
  return compiled.ok
    ? { policy: compiled.policy, errors: [] }
    : { policy: DEFAULT_TENANT_POLICY, errors: compiled.errors };
}

/**
 * A stored document's retentionDays, read without compiling the rest of it (retention reads every
 * tenant's once a minute). A value the schema would refuse counts as absent. A document whose other
 * members no longer compile (verify then falls back to the default policy) keeps its retention: what
 * a stricter release refuses there must not make events go sooner or later than the tenant set.
 */
export function storedRetentionDays(document: string): TenantRetention {
  let value: unknown;
  try {
    value = (JSON.parse(document) as { retentionDays?: unknown } | null)?.retentionDays;
  } catch {
    return undefined;
  }
  if (value === "forever") return value;
  return Number.isInteger(value) &&
    (value as number) >= RETENTION_DAYS_RANGE.min &&
    (value as number) <= RETENTION_DAYS_RANGE.max
    ? (value as number)
    : undefined;
}

/**
 * The list networks narrower than what verify reads of an attempt without a raw address (ipTrunc and
 * every SDK call: /24 for IPv4, /48 for IPv6 in `prefixes`): a rule matches a network only when it
 * contains all of it, so these match only attempts that send the raw address (subject.ip).
 */
export function narrowNetworks(policy: TenantPolicy, prefixes: { ipv4: number; ipv6: number }): string[] {
  const out: string[] = [];
  for (const side of ["allow", "deny"] as const) {
    policy[side].networks.forEach((rule, i) => {
      const [addr, bits] = rule.range;
      const widest = addr.kind() === "ipv4" ? prefixes.ipv4 : prefixes.ipv6;
      if (bits > widest)
        out.push(`${side}.networks[${i}]: ${JSON.stringify(rule.text)} is narrower than /${widest}`);
    });
  }
  return out;
}

/** Whether a truncated network (or a raw address) falls inside one of the rules. */
export function matchNetwork(
  rules: readonly NetworkRule[],
  network: { addr: ipaddr.IPv4 | ipaddr.IPv6; prefix: number } | undefined,
): NetworkRule | undefined {
  if (!network || rules.length === 0) return undefined;
  for (const rule of rules) {
    const [base, bits] = rule.range;
    if (base.kind() !== network.addr.kind() || bits > network.prefix) continue;
    if ((network.addr as ipaddr.IPv4).match(base as ipaddr.IPv4, bits)) return rule;
  }
  return undefined;
}
