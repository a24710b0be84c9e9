import { sha256Hex } from "../../lib/crypto.js";
import { matchNetwork, type TenantPolicy } from "../../policy/tenantPolicy.js";
import { type AgentIdentity, type KeyLookup, verifyAgent } from "../../webBotAuth/verifyAgent.js";
import type { DecisionModel } from "./decisionModel.js";
import type { VerifyRequest } from "./schema.js";
import { browserHeadersSignal, normaliseHeaders } from "./signals/browserHeaders.js";
import { type CampaignKey, campaignKeys } from "./signals/campaign.js";
import { readEmail } from "./signals/email.js";
import { capJointly, type Finding, type Story } from "./signals/findings.js";
import { readFormData } from "./signals/formData.js";
import type { HostingNetworks } from "./signals/hostingNetworks.js";
import {
  fullyTruncated,
  IPV4_PREFIX,
  IPV6_PREFIX,
  type Network,
  readAddress,
  readNetwork,
} from "./signals/ip.js";
import { environmentDigest, readEnvironment } from "./signals/pageEnvironment.js";
import { type PageKeyLookup, readPageToken } from "./signals/pageEvidence.js";
import { SIGNALS } from "./signals/registry.js";
import type { RequestView, Signal } from "./signals/signal.js";
import { readJa4 } from "./signals/tlsFingerprint.js";
import { MAX_USER_AGENT, readUserAgent } from "./signals/userAgent.js";
import type { VelocityKey } from "./signals/velocity.js";

/** What observe needs besides the request: the model, the tenant's rules and the shared lookups. */
export interface ObserveContext {
  model: DecisionModel;
  /** The tenant's compiled policy document. */
  policy: TenantPolicy;
  hosting: HostingNetworks;
  agentKeys: KeyLookup;
  /** Unix seconds, for signature times. */
  nowSeconds: number;
  /** Unix milliseconds, for page tokens' age. */
  nowMs: number;
  tenantId: string;
  /** The page-token key of a published signing key (tokens/pageToken.ts). */
  pageKey: PageKeyLookup;
}

/** The tenant's list entries a request matched, as display text. */
export interface ListHits {
  allow: string[];
  deny: string[];
}

/**
 * What one verify request shows, read without the store: findings of the stateless signals, the agent
 * identity, list hits, the keys to count velocity on, and the protected values recorded with the event.
 */
export interface RequestEvidence {
  findings: Finding[];
  channels: number;
  browserConsistent: boolean;
  agent: AgentIdentity;
  lists: ListHits;
  /** A business email domain (not free, not disposable) of a raw address, for attribution. */
  businessDomain: string | undefined;
  velocityKeys: VelocityKey[];
  /** The shape and environment the attempt counts under across networks (signals/campaign.ts). */
  campaignKeys: CampaignKey[];
  /** The attempt's network as velocity and the campaign counters count it (truncated, /24 or /48). */
  network: string | undefined;
  /** Recorded with the event: hashes, truncated networks and flags only. */
  recorded: Record<string, unknown>;
}

/** What a client chose of its setup, matched by deny lists only. */
interface ClientSetup {
  environment: string | undefined;
  ja4: string | undefined;
  userAgent: string | undefined;
  shape: string | undefined;
}

function listHits(
  policy: TenantPolicy,
  network: Network | undefined,
  email: { hash?: string | undefined; normalizedHash?: string | undefined; domain?: string | undefined },
  agent: AgentIdentity,
  setup: ClientSetup,
): ListHits {
  const hits: ListHits = { allow: [], deny: [] };
  const { deny } = policy;
  if (setup.environment && deny.environments.has(setup.environment)) {
    hits.deny.push(`browser environment ${setup.environment}`);
  }
  if (setup.ja4 && deny.tlsFingerprints.has(setup.ja4)) hits.deny.push(`TLS fingerprint ${setup.ja4}`);
  if (setup.userAgent && deny.userAgents.has(setup.userAgent)) hits.deny.push("this user agent");
  if (setup.shape && deny.shapes.has(setup.shape)) hits.deny.push(`request shape ${setup.shape}`);
  for (const side of ["allow", "deny"] as const) {
    const lists = policy[side];
    const net = matchNetwork(lists.networks, network);
    if (net) hits[side].push(`network ${net.text}`);
    if (email.domain) {
      const labels = email.domain.split(".");
      const listed = labels.map((_, i) => labels.slice(i).join(".")).find((d) => lists.emailDomains.has(d));
      if (listed) hits[side].push(`email domain ${listed}`);
    }
    // A listed address matches every variant of its mailbox (+tags, Gmail's dots), as velocity counts
    // them: a raw address is read as its mailbox too (signals/email.ts, mailboxAddress).
    if (email.hash && lists.emailHashes.has(email.hash)) hits[side].push("this email address");
    else if (email.normalizedHash && lists.emailHashes.has(email.normalizedHash)) {
      hits[side].push("this email address's mailbox");
    }
    if (agent.outcome === "verified" && lists.agentOperators.has(agent.operator)) {
      hits[side].push(`agent operator ${agent.operator}`);
    }
  }
  return hits;
}

/**
 * What the schema cannot say about a subject, checked before anything else runs (400 invalid_field):
 * - `ip` is one address, never a network: the tenant's lists match single addresses on it;
 * - `ipTrunc` is an address or a network no wider than Warden's own truncation (/24, /48): a wider
 *   one would contain networks the tenant's lists name, without matching them;
 * - a user agent forwarded in `headers` meets subject.userAgent's cap.
 */
export function subjectError(req: VerifyRequest): { field: string; message: string } | undefined {
  const { ip, ipTrunc, headers } = req.subject;
  if (ip !== undefined && !readAddress(ip)) {
    return {
      field: "subject.ip",
      message: "subject.ip is not a single IPv4 or IPv6 address (send a network as ipTrunc).",
    };
  }
  if (ip === undefined && ipTrunc !== undefined) {
    const network = readNetwork(ipTrunc);
    if (!network) {
      return { field: "subject.ipTrunc", message: "subject.ipTrunc is not an IP network or address." };
    }
    if (!fullyTruncated(network)) {
      return {
        field: "subject.ipTrunc",
        message: `subject.ipTrunc is wider than /${IPV4_PREFIX} (IPv4) or /${IPV6_PREFIX} (IPv6); send the address or its /${IPV4_PREFIX} or /${IPV6_PREFIX}.`,
      };
    }
  }
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (name.toLowerCase() !== "user-agent") continue;
    const length = Array.isArray(value) ? value.join(", ").length : value.length;
    if (length > MAX_USER_AGENT) {
      return {
        field: `subject.headers.${name}`,
        message: `subject.headers.${name} is longer than ${MAX_USER_AGENT} characters, the cap of subject.userAgent.`,
      };
    }
  }
  return undefined;
}

/**
 * Findings that tell one story (Finding.story, set by the signal that finds them) count once, jointly
 * at most a cap (capJointly): a program's own user agent and its library's handshake (the larger
 * weight, so that naming itself never costs a library less than posing as a browser); a browser that
 * disguises itself contradicts its client hints, its own worker and its TLS stack at once, as a
 * person's user-agent switcher does (disguiseCap).
 */
const JOINT_CAPS: readonly (readonly [Story, (w: DecisionModel["weights"]) => number])[] = [
  ["program", (w) => Math.max(w.uaAutomation, w.tls.library)],
  ["disguise", (w) => w.disguiseCap],
];

/** Reads the request once into the view every signal shares (signals/signal.ts). */
function viewOf(req: VerifyRequest, ctx: ObserveContext): RequestView {
  const { subject } = req;
  const raw = subject.ip ?? subject.ipTrunc;
  const network: Network | undefined = raw === undefined ? undefined : readNetwork(raw);
  const headers = normaliseHeaders(subject.headers);
  const agent: AgentIdentity = headers
    ? verifyAgent({ headers }, ctx.agentKeys, {
        now: ctx.nowSeconds,
        skewSeconds: ctx.model.signatureSkewSeconds,
        hosts: ctx.policy.webBotAuthHosts,
      })
    : { outcome: "absent" };
  return {
    req,
    model: ctx.model,
    policy: ctx.policy,
    nowMs: ctx.nowMs,
    ua: readUserAgent(subject.userAgent ?? headers?.["user-agent"]),
    headers,
    network,
    email: readEmail(subject.email, subject.emailSha256),
    form: readFormData(subject.formData, subject.formDataHashed),
    agent,
    declared: agent.outcome === "verified",
    ja4: readJa4(subject.tls?.ja4),
    pageToken: readPageToken(subject.page, ctx.pageKey, ctx.tenantId, ctx.nowMs),
    environment: readEnvironment(subject.page),
    hosting: network ? ctx.hosting.lookup(network.addr) : undefined,
  };
}

/**
 * Every signal's findings, in the registry's order, under the joint rules: consistent browser headers
 * show a real browser, not a person at it, so next to another signal's evidence that automation drives
 * it or that it is disguised (Signal.contradictsBrowser) they take nothing off the risk (and add
 * nothing); then the joint caps.
 */
function findingsOf(view: RequestView): Finding[] {
  const read = SIGNALS.filter((s) => !(view.declared && "explainedByDeclaredAgent" in s)).map((signal) => ({
    signal: signal as Signal,
    findings: signal.findings(view),
  }));
  const contradicted = read.some(
    ({ signal, findings }) => signal.contradictsBrowser && findings.some(signal.contradictsBrowser),
  );
  let findings = read
    .filter(({ signal }) => !(contradicted && signal === browserHeadersSignal))
    .flatMap((r) => r.findings);
  for (const [story, cap] of JOINT_CAPS) {
    findings = capJointly(findings, (f) => f.story === story, cap(view.model.weights));
  }
  return findings;
}

/** Reads a request that passed subjectError. */
export function observe(req: VerifyRequest, ctx: ObserveContext): RequestEvidence {
  const view = viewOf(req, ctx);
  const { subject } = req;
  const { network, email, form, agent, headers, ua, hosting, ja4, pageToken } = view;
  // Tenant network lists may name single addresses: with the raw-PII opt-in, match the full address
  // (subjectError made sure `ip` is one).
  const exact = subject.ip === undefined ? network : readAddress(subject.ip);
  const findings = findingsOf(view);

  const hasHeaders = headers !== undefined && Object.keys(headers).length > 0;
  const channels = [
    ua.present,
    hasHeaders,
    email.hash !== undefined,
    network !== undefined,
    form.present,
  ].filter(Boolean).length;

  const velocityKeys: VelocityKey[] = [];
  if (network) velocityKeys.push({ kind: "ip_network", value: network.text });
  if (email.hash) velocityKeys.push({ kind: "email_hash", value: email.hash });
  if (email.normalizedHash && email.normalizedHash !== email.hash) {
    velocityKeys.push({ kind: "email_normalized", value: email.normalizedHash });
  }
  const businessDomain =
    email.domain && email.valid && !email.freeMail && !email.disposable ? email.domain : undefined;
  if (businessDomain) velocityKeys.push({ kind: "email_domain", value: businessDomain });
  if (req.session !== undefined) velocityKeys.push({ kind: "session", value: req.session });
  for (const value of form.repeatKeys) velocityKeys.push({ kind: "form_value", value });
  if (pageToken.state === "valid") velocityKeys.push({ kind: "page_token", value: pageToken.claims.nonce });

  const environment = environmentDigest(view.environment);
  // An agent that signed its requests is one operator by its own word: counted by the tenant's rule
  // for verified agents, not as a campaign disguised across networks.
  // A probed token's page always reports its device facts (@warden/browser watchPage): a form that
  // answers the probe and leaves every fact out is counted under one key of its own, so that leaving
  // them out does not take a campaign out of the counters.
  const counted =
    environment ?? (pageToken.state === "valid" && pageToken.claims.probe ? "no-device-facts" : undefined);
  const campaign = view.declared ? [] : campaignKeys(ua, headers, ja4, counted);
  const shapeKey = campaign.find((k) => k.kind === "shape");
  // The shape's digest as events record it: what the console's campaigns group by and a shapes rule names.
  const shape = shapeKey ? sha256Hex(`warden-shape:${shapeKey.value}`).slice(0, 32) : undefined;

  return {
    findings,
    channels,
    browserConsistent: findings.some((f) => f.id === "browser_consistent"),
    agent,
    lists: listHits(ctx.policy, exact, email, agent, {
      environment,
      ja4: ja4?.text,
      userAgent: subject.userAgent ?? headers?.["user-agent"],
      shape,
    }),
    businessDomain,
    velocityKeys,
    campaignKeys: campaign,
    network: network?.text,
    recorded: {
      ipNetwork: network?.text ?? null,
      hosting: hosting ? { asn: hosting.asn } : null,
      emailSha256: email.hash ?? null,
      emailDomain: email.domain ?? null,
      // As verify read it (subject.userAgent, else the forwarded header): what a userAgents rule matches.
      userAgent: subject.userAgent ?? headers?.["user-agent"] ?? null,
      // Header names only: values (cookies, forwarded client IPs) are never stored.
      headerNames: headers ? Object.keys(headers).sort() : [],
      browser: ua.browser ?? null,
      tls: ja4?.text ?? null,
      formFields: form.fields,
      // With the seed a challenge on this attempt is sealed with: the one its page was handed.
      page:
        pageToken.state === "valid"
          ? { ageMs: pageToken.ageMs, powSeed: pageToken.powSeed }
          : pageToken.state,
      // Digests that group attempts of one setup (the console's campaigns): never the values.
      environment: environment ?? null,
      shape: shape ?? null,
      agent: agentRecord(agent),
    },
  };
}

/** Agent identity as recorded: outcome, key thumbprint and operator; no header values. */
function agentRecord(a: AgentIdentity): Record<string, unknown> | null {
  if (a.outcome === "absent") return null;
  if (a.outcome === "verified") {
    return {
      outcome: a.outcome,
      keyid: a.keyid,
      operator: a.operator,
      signatureAgent: a.signatureAgent ?? null,
    };
  }
  return { outcome: a.outcome, why: a.why, keyid: a.keyid ?? null, signatureAgent: a.signatureAgent ?? null };
}
