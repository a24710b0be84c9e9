import { domainToASCII } from "node:url";

/**
 * A domain name as mail servers and DNS read it: lower-cased, without the root's trailing dot, and an
 * internationalised name in its ASCII (Punycode) form, after Unicode normalisation, so `bücher.example`,
 * `bu\u0308cher.example` and `xn--bcher-kva.example.` are one domain. A name that is not a domain
 * comes back trimmed and lower-cased, for DOMAIN_NAME to refuse.
 */
export function asciiDomain(name: string): string {
  const bare = name.trim().toLowerCase().replace(/\.+$/, "");
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range, control characters included
  if (/^[\x00-\x7f]*$/.test(bare)) return bare;
  return domainToASCII(bare.normalize("NFC")) || bare;
}

/** A host name of at least two labels whose last is a top-level domain (letters, or an IDN's xn--). */
export const DOMAIN_NAME =
  /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;
