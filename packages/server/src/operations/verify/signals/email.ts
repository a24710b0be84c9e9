import mailchecker from "mailchecker";
import { sha256Hex } from "../../../lib/crypto.js";
import type { Finding } from "./findings.js";

/** mailchecker's maintained list of disposable providers, loaded once. */
const DISPOSABLE: ReadonlySet<string> = new Set([...mailchecker.blacklist()].map((d) => d.toLowerCase()));

export interface EmailSignal {
  /** SHA-256 hex of the trimmed, lower-cased address: the only form stored. */
  hash: string | undefined;
  /** Domain of a raw address (tenant opted in); undefined with only a hash. */
  domain: string | undefined;
  disposable: boolean;
}

/** The address's domain or any parent domain is on the list (subdomains of a provider count). */
export function isDisposableDomain(domain: string): boolean {
  const labels = domain.toLowerCase().split(".");
  for (let i = 0; i < labels.length - 1; i++) {
    if (DISPOSABLE.has(labels.slice(i).join("."))) return true;
  }
  return false;
}

/** Hash of an address as Warden stores it; callers sending emailSha256 must hash the same form. */
export function emailHash(email: string): string {
  return sha256Hex(email.trim().toLowerCase());
}

export function readEmail(email: string | undefined, emailSha256: string | undefined): EmailSignal {
  if (email !== undefined) {
    const at = email.lastIndexOf("@");
    const domain =
      at > 0
        ? email
            .slice(at + 1)
            .trim()
            .toLowerCase()
        : undefined;
    return { hash: emailHash(email), domain, disposable: domain !== undefined && isDisposableDomain(domain) };
  }
  return { hash: emailSha256?.toLowerCase(), domain: undefined, disposable: false };
}

export function emailFindings(sig: EmailSignal, weights: { disposable: number }): Finding[] {
  if (!sig.disposable) return [];
  return [
    {
      id: "email_disposable",
      logOdds: weights.disposable,
      reason: `The email address uses a disposable email provider (${sig.domain}).`,
    },
  ];
}
