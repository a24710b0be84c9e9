import { createRequire } from "node:module";
import mailchecker from "mailchecker";
import { sha256Hex } from "../../../lib/crypto.js";
import { asciiDomain, DOMAIN_NAME } from "../../../lib/domainName.js";
import type { ReasonCategory } from "../reasonCodes.js";
import type { Finding } from "./findings.js";
import type { Signal } from "./signal.js";

/** mailchecker's maintained list of disposable providers, loaded once. */
const DISPOSABLE: ReadonlySet<string> = new Set([...mailchecker.blacklist()].map((d) => d.toLowerCase()));

/** email-providers' list of free mail providers (ISC); disposable ones are told apart by the list above. */
const FREE_MAIL: ReadonlySet<string> = new Set(
  (createRequire(import.meta.url)("email-providers/all.json") as string[]).map((d) => d.toLowerCase()),
);

/** Providers that ignore dots in the local part (Gmail); googlemail.com is the same mailbox. */
const DOTS_IGNORED = new Set(["gmail.com", "googlemail.com"]);
const DOMAIN_ALIAS: ReadonlyMap<string, string> = new Map([["googlemail.com", "gmail.com"]]);

export interface EmailSignal {
  /** SHA-256 hex of the trimmed, lower-cased address: the only form of the address stored. */
  hash: string | undefined;
  /** SHA-256 hex of the mailbox's address (mailboxAddress); raw addresses only. */
  normalizedHash: string | undefined;
  /** Domain of a raw address (tenant opted in); undefined with only a hash. */
  domain: string | undefined;
  /** false when a raw address is not a syntactically valid address. */
  valid: boolean;
  disposable: boolean;
  freeMail: boolean;
  /** The local part looks machine-generated. */
  randomLocal: boolean;
}

const LOCAL = /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;

/** The address's domain or any parent domain is on the list (subdomains of a provider count). */
function onList(list: ReadonlySet<string>, domain: string): boolean {
  const labels = domain.split(".");
  for (let i = 0; i < labels.length - 1; i++) if (list.has(labels.slice(i).join("."))) return true;
  return false;
}

export const isDisposableDomain = (domain: string): boolean => onList(DISPOSABLE, domain.toLowerCase());
export const isFreeMailDomain = (domain: string): boolean => {
  const d = domain.toLowerCase();
  return FREE_MAIL.has(d) && !onList(DISPOSABLE, d);
};

/** Hash of an address as Warden stores it; callers sending emailSha256 must hash the same form. */
export function emailHash(email: string): string {
  return sha256Hex(email.trim().toLowerCase());
}

/**
 * The address of the mailbox an address delivers to, one form for all its variants: lower case, the
 * +tag removed (sub-addressing, which most providers and hosted domains deliver to the same mailbox),
 * dots removed where the provider ignores them, and googlemail.com read as gmail.com. Defeats a farm
 * of plus/dot variants of one address (velocity kind email_normalized).
 */
export function mailboxAddress(email: string): string | undefined {
  const text = email.trim().toLowerCase();
  const at = text.lastIndexOf("@");
  if (at <= 0) return undefined;
  // Forms that deliver to the same mailbox at most servers: a quoted local part, a root-dotted domain.
  let local = text.slice(0, at).replace(/^"(.*)"$/, "$1");
  let domain = text.slice(at + 1).replace(/\.+$/, "");
  const plus = local.indexOf("+");
  if (plus > 0) local = local.slice(0, plus);
  if (DOTS_IGNORED.has(domain)) local = local.replaceAll(".", "");
  domain = DOMAIN_ALIAS.get(domain) ?? domain;
  return `${local}@${domain}`;
}

const VOWELS = new Set("aeiouy");

/**
 * A local part that looks machine-generated: long, and either switching between letters and digits
 * again and again ("x7k2q9p3") or a long run of consonants with few vowels ("qzrtkwpxm"). Names with a
 * year ("jsmith1985") or initials do not qualify.
 */
export function looksRandom(local: string): boolean {
  const s = local.toLowerCase().replace(/[^a-z0-9]/g, "");
  if (s.length < 8) return false;
  let switches = 0;
  let run = 0;
  let maxRun = 0;
  let vowels = 0;
  let letters = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i] as string;
    const digit = c >= "0" && c <= "9";
    if (i > 0) {
      const prevDigit = (s[i - 1] as string) >= "0" && (s[i - 1] as string) <= "9";
      if (digit !== prevDigit) switches++;
    }
    if (digit) {
      run = 0;
      continue;
    }
    letters++;
    if (VOWELS.has(c)) {
      vowels++;
      run = 0;
    } else {
      run++;
      maxRun = Math.max(maxRun, run);
    }
  }
  return switches >= 4 || (maxRun >= 5 && letters > 0 && vowels / letters < 0.25);
}

export function readEmail(email: string | undefined, emailSha256: string | undefined): EmailSignal {
  if (email === undefined) {
    return {
      hash: emailSha256?.toLowerCase(),
      normalizedHash: undefined,
      domain: undefined,
      valid: true,
      disposable: false,
      freeMail: false,
      randomLocal: false,
    };
  }
  const text = email.trim().toLowerCase();
  const at = text.lastIndexOf("@");
  const local = at > 0 ? text.slice(0, at) : text;
  // The domain as mail servers read it (the root's dot, an internationalised name's ASCII form), so
  // that a deny list's domain is not passed by another spelling of it.
  const domain = at > 0 ? asciiDomain(text.slice(at + 1)) : undefined;
  const valid = domain !== undefined && local.length <= 64 && LOCAL.test(local) && DOMAIN_NAME.test(domain);
  // Also for an address Warden calls invalid: a deny list must not be passed by spelling the mailbox
  // in a form a mail server still delivers to.
  const mailbox = mailboxAddress(text);
  return {
    hash: emailHash(email),
    normalizedHash: mailbox === undefined ? undefined : sha256Hex(mailbox),
    domain,
    valid,
    disposable: valid && domain !== undefined && isDisposableDomain(domain),
    freeMail: valid && domain !== undefined && isFreeMailDomain(domain),
    randomLocal: valid && looksRandom(local.split("+")[0] ?? local),
  };
}

export function emailFindings(
  sig: EmailSignal,
  weights: { disposable: number; invalid: number; randomLocal: number },
): Finding[] {
  const out: Finding[] = [];
  if (!sig.valid) {
    out.push({
      id: "email_invalid",
      logOdds: weights.invalid,
      reason: "The email address is not a valid address.",
    });
  }
  if (sig.disposable) {
    out.push({
      id: "email_disposable",
      logOdds: weights.disposable,
      reason: `The email address uses a disposable email provider (${sig.domain}).`,
    });
  }
  if (sig.randomLocal) {
    out.push({
      id: "email_random",
      logOdds: weights.randomLocal,
      reason: "The email address's local part looks machine-generated.",
    });
  }
  return out;
}

/** The reason codes of this signal's findings, with their category. */
const CODES = {
  email_disposable: "email",
  email_invalid: "email",
  email_random: "email",
} as const satisfies Record<string, ReasonCategory>;

export const emailSignal: Signal<keyof typeof CODES> = {
  name: "email address",
  codes: CODES,
  findings: ({ email, model: { weights: w } }) =>
    emailFindings(email, {
      disposable: w.emailDisposable,
      invalid: w.emailInvalid,
      randomLocal: w.emailRandom,
    }),
};
