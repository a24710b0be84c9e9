import type { DecisionPolicy } from "./policy.js";
import type { VerifyRequest } from "./schema.js";
import { browserHeaderFindings, normaliseHeaders, readBrowserHeaders } from "./signals/browserHeaders.js";
import { emailFindings, readEmail } from "./signals/email.js";
import type { Finding } from "./signals/findings.js";
import { truncateIp } from "./signals/ip.js";
import { readUserAgent, userAgentFindings } from "./signals/userAgent.js";
import type { VelocityKey } from "./signals/velocity.js";

/**
 * What one verify request shows, read without the store: findings of the stateless signals, the keys
 * to count velocity on, and the protected values that may be recorded with the event.
 */
export interface Observation {
  findings: Finding[];
  channels: number;
  browserConsistent: boolean;
  velocityKeys: VelocityKey[];
  /** Recorded with the event: hashes, truncated networks and flags only. */
  recorded: Record<string, unknown>;
}

export type ObserveResult =
  | { ok: true; observation: Observation }
  | { ok: false; field: string; message: string };

export function observe(req: VerifyRequest, policy: DecisionPolicy): ObserveResult {
  const { subject } = req;
  const w = policy.weights;

  let ipNetwork: string | undefined;
  if (subject.ip !== undefined) {
    ipNetwork = truncateIp(subject.ip);
    if (!ipNetwork)
      return { ok: false, field: "subject.ip", message: "subject.ip is not an IPv4 or IPv6 address." };
  } else if (subject.ipTrunc !== undefined) {
    ipNetwork = truncateIp(subject.ipTrunc);
    if (!ipNetwork) {
      return {
        ok: false,
        field: "subject.ipTrunc",
        message: "subject.ipTrunc is not an IP network or address.",
      };
    }
  }

  const email = readEmail(subject.email, subject.emailSha256);
  const ua = readUserAgent(subject.userAgent);
  const headers = normaliseHeaders(subject.headers);
  const browserHeaders = readBrowserHeaders(ua, headers);

  const findings = [
    ...userAgentFindings(ua, { missing: w.uaMissing, automation: w.uaAutomation }),
    ...browserHeaderFindings(browserHeaders, {
      perMissingGroup: w.headersMissingPerGroup,
      consistent: w.browserConsistent,
    }),
    ...emailFindings(email, { disposable: w.emailDisposable }),
  ];

  const hasHeaders = headers !== undefined && Object.keys(headers).length > 0;
  const channels = [ua.present, hasHeaders, email.hash !== undefined, ipNetwork !== undefined].filter(
    Boolean,
  ).length;

  const velocityKeys: VelocityKey[] = [];
  if (ipNetwork) velocityKeys.push({ kind: "ip_network", value: ipNetwork });
  if (email.hash) velocityKeys.push({ kind: "email_hash", value: email.hash });

  return {
    ok: true,
    observation: {
      findings,
      channels,
      browserConsistent: browserHeaders?.consistent === true,
      velocityKeys,
      recorded: {
        ipNetwork: ipNetwork ?? null,
        emailSha256: email.hash ?? null,
        emailDomain: email.domain ?? null,
        userAgent: subject.userAgent ?? null,
        // Header names only: values (cookies, forwarded client IPs) are never stored.
        headerNames: headers ? Object.keys(headers).sort() : [],
        browser: ua.browser ?? null,
      },
    },
  };
}
