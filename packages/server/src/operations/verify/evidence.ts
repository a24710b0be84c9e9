import { matchNetwork, type TenantPolicy } from "../../policy/tenantPolicy.js";
import { type AgentIdentity, type KeyLookup, verifyAgent } from "../../webBotAuth/verifyAgent.js";
import type { DecisionModel } from "./decisionModel.js";
import type { VerifyRequest } from "./schema.js";
import { agentSignatureFindings } from "./signals/agentSignature.js";
import { browserHeaderFindings, normaliseHeaders, readBrowserHeaders } from "./signals/browserHeaders.js";
import { browserSignalFindings } from "./signals/browserSignals.js";
import { clientHintsFindings, readClientHints } from "./signals/clientHints.js";
import { emailFindings, readEmail } from "./signals/email.js";
import { fetchMetadataFindings } from "./signals/fetchMetadata.js";
import { capJointly, type Finding } from "./signals/findings.js";
import { formDataFindings, readFormData } from "./signals/formData.js";
import { headerOrderFindings, languageOverridden } from "./signals/headerOrder.js";
import type { HostingNetworks } from "./signals/hostingNetworks.js";
import {
  fullyTruncated,
  IPV4_PREFIX,
  IPV6_PREFIX,
  type Network,
  readAddress,
  readNetwork,
} from "./signals/ip.js";
import { type PageKeyLookup, pageEvidenceFindings, readPageToken } from "./signals/pageEvidence.js";
import { readJa4, tlsFindings } from "./signals/tlsFingerprint.js";
import { MAX_USER_AGENT, readUserAgent, userAgentFindings } from "./signals/userAgent.js";
import type { VelocityKey } from "./signals/velocity.js";

/** What observe needs besides the request: the model, the tenant's rules and the shared lookups. */
export interface ObserveContext {
  model: DecisionModel;
  tenant: TenantPolicy;
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
export interface Observation {
  findings: Finding[];
  channels: number;
  browserConsistent: boolean;
  agent: AgentIdentity;
  lists: ListHits;
  /** A business email domain (not free, not disposable) of a raw address, for attribution. */
  businessDomain: string | undefined;
  velocityKeys: VelocityKey[];
  /** Recorded with the event: hashes, truncated networks and flags only. */
  recorded: Record<string, unknown>;
}

function listHits(
  policy: TenantPolicy,
  network: Network | undefined,
  email: { hash?: string | undefined; normalizedHash?: string | undefined; domain?: string | undefined },
  agent: AgentIdentity,
): ListHits {
  const hits: ListHits = { allow: [], deny: [] };
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

/** Reads a request that passed subjectError. */
export function observe(req: VerifyRequest, ctx: ObserveContext): Observation {
  const { subject } = req;
  const w = ctx.model.weights;

  const raw = subject.ip ?? subject.ipTrunc;
  const network: Network | undefined = raw === undefined ? undefined : readNetwork(raw);
  // Tenant network lists may name single addresses: with the raw-PII opt-in, match the full address
  // (subjectError made sure `ip` is one).
  const exact = subject.ip === undefined ? network : readAddress(subject.ip);

  const email = readEmail(subject.email, subject.emailSha256);
  const headers = normaliseHeaders(subject.headers);
  const ua = readUserAgent(subject.userAgent ?? headers?.["user-agent"]);
  const browserHeaders = readBrowserHeaders(ua, headers);
  const form = readFormData(subject.formData, subject.formDataHashed);
  const agent: AgentIdentity = headers
    ? verifyAgent({ headers }, ctx.agentKeys, {
        now: ctx.nowSeconds,
        skewSeconds: ctx.model.signatureSkewSeconds,
        hosts: ctx.tenant.webBotAuthHosts,
      })
    : { outcome: "absent" };
  const hosting = network ? ctx.hosting.lookup(network.addr) : undefined;

  // A verified agent declared itself: automation evidence about it is explained, not suspicious.
  const declared = agent.outcome === "verified";
  // The same fact as an automation user agent: counted once.
  const pageReports =
    declared || ua.automation
      ? []
      : browserSignalFindings(subject.browserSignals, {
          automation: w.uaAutomation,
          scopeMismatch: w.pageScopeMismatch,
        });
  const hints = clientHintsFindings(readClientHints(ua, headers), {
    mismatch: w.clientHintsMismatch,
    headless: w.uaAutomation,
  });
  const headerOrder = [
    ...headerOrderFindings(languageOverridden(ua, headers), w.headerOrderOverride),
    ...fetchMetadataFindings(headers, w.navigationJson),
  ];
  const ja4 = readJa4(subject.tls?.ja4);
  const tls = declared ? [] : tlsFindings(ja4, ua, w.tls);
  const pageToken = readPageToken(subject.page, ctx.pageKey, ctx.tenantId, ctx.nowMs);
  const page = pageEvidenceFindings(
    pageToken,
    subject.page?.behaviour,
    { network: network?.text, userAgent: subject.userAgent ?? headers?.["user-agent"] },
    {
      required: ctx.tenant.requirePage(req.action),
      minFillMs: ctx.model.pageMinFillMs,
      ttlMs: ctx.model.pageTokenTtlMs,
    },
    w.page,
  );
  // Consistent headers show a real browser, not a person at it: next to evidence that automation
  // drives it (the page's own report, client hints that contradict it, a DevTools override's header
  // order, another TLS stack than the browser's, a page that never ran or was not filled in by a
  // person) they take nothing off the risk. Unfamiliar cipher suites are not such evidence: people
  // behind TLS inspection have them.
  const browserEvidence =
    pageReports.length > 0 ||
    hints.length > 0 ||
    headerOrder.length > 0 ||
    tls.some((f) => f.id !== "tls_unfamiliar") ||
    page.some((f) => f.automation)
      ? undefined
      : browserHeaders;
  const findings: Finding[] = capJointly(
    capJointly(
      [
        ...agentSignatureFindings(agent, {
          verified: w.agentVerified,
          invalid: w.agentInvalid,
          unverified: w.agentUnverified,
        }),
        ...(declared ? [] : userAgentFindings(ua, { missing: w.uaMissing, automation: w.uaAutomation })),
        ...browserHeaderFindings(browserEvidence, {
          perMissingGroup: w.headersMissingPerGroup,
          consistent: w.browserConsistent,
        }),
        ...hints,
        ...headerOrder,
        ...tls,
        ...pageReports,
        ...(declared ? [] : page),
        ...emailFindings(email, {
          disposable: w.emailDisposable,
          invalid: w.emailInvalid,
          randomLocal: w.emailRandom,
        }),
        ...formDataFindings(form, { perLink: w.formLinkEach, linksCap: w.formLinksCap }),
      ],
      // A program's own user agent and its library's handshake say one thing: a program (the larger
      // weight, so that naming itself never costs a library less than posing as a browser).
      (f) => f.id === "ua_automation" || f.id === "tls_library",
      Math.max(w.uaAutomation, w.tls.library),
    ),
    // A browser that disguises itself contradicts its client hints, its own worker and its TLS stack
    // at once: a user-agent switcher, as people use, does all three; counted as one story (disguiseCap).
    (f) =>
      (f.id === "client_hints_mismatch" && !f.automation) ||
      f.id === "page_scope_mismatch" ||
      f.id === "tls_other_browser",
    w.disguiseCap,
  );
  if (hosting && !declared) {
    findings.push({
      id: "hosting_network",
      logOdds: w.hostingNetwork,
      reason: `The network belongs to a hosting or cloud provider (AS${hosting.asn} ${hosting.org}), not a consumer ISP.`,
    });
  }

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

  return {
    findings,
    channels,
    browserConsistent: browserEvidence?.consistent === true,
    agent,
    lists: listHits(ctx.tenant, exact, email, agent),
    businessDomain,
    velocityKeys,
    recorded: {
      ipNetwork: network?.text ?? null,
      hosting: hosting ? { asn: hosting.asn } : null,
      emailSha256: email.hash ?? null,
      emailDomain: email.domain ?? null,
      userAgent: subject.userAgent ?? null,
      // Header names only: values (cookies, forwarded client IPs) are never stored.
      headerNames: headers ? Object.keys(headers).sort() : [],
      browser: ua.browser ?? null,
      tls: ja4?.text ?? null,
      formFields: form.fields,
      page: pageToken.state === "valid" ? { ageMs: pageToken.ageMs } : pageToken.state,
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
