/**
 * What the events search box understands. An email address is hashed here, in the browser, exactly
 * as the server hashes it (SHA-256 hex of the trimmed, lower-cased address: signals/email.ts), so the
 * address itself never leaves the page: not to the server, not into the URL or the history. An IP
 * address is cut to its /24 (IPv4) or /48 (IPv6) here for the same reason; that network is what
 * events keep.
 */
export type SearchTerm =
  | { kind: "empty" }
  | { kind: "email"; address: string }
  | { kind: "emailHash"; hash: string }
  | { kind: "event"; eventId: string }
  | { kind: "network"; network: string }
  | { kind: "wideNetwork"; text: string }
  /** Text with an "@" that is not exactly one address: never sent anywhere, it may hold addresses. */
  | { kind: "notOneAddress" }
  | { kind: "session"; session: string };

const HEX64 = /^[0-9a-f]{64}$/i;

/** How the text typed is searched (the most specific reading first). */
export function readSearch(text: string): SearchTerm {
  const value = text.trim();
  if (value === "") return { kind: "empty" };
  if (HEX64.test(value)) return { kind: "emailHash", hash: value.toLowerCase() };
  if (/^evt_[A-Za-z0-9_-]+$/.test(value)) return { kind: "event", eventId: value };
  // What a mail client copies: "mailto:a@b.c", "Name <a@b.c>" or "<a@b.c>" name one address.
  const address = (/^[^<>]*<([^<>]*)>$/.exec(value)?.[1] ?? value).trim().replace(/^mailto:/i, "");
  if (/^[^\s@<>,;"]+@[^\s@<>,;"]+$/.test(address)) return { kind: "email", address };
  if (value.includes("@")) return { kind: "notOneAddress" };
  const network = truncateNetwork(value);
  if (network === "wide") return { kind: "wideNetwork", text: value };
  if (network) return { kind: "network", network };
  return { kind: "session", session: value };
}

/** SHA-256 hex of the trimmed, lower-cased address, as verify stores it. */
export async function emailHash(address: string): Promise<string> {
  const bytes = new TextEncoder().encode(address.trim().toLowerCase());
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * An IPv4 or IPv6 address or network as the network events keep ("203.0.113.0/24",
 * "2001:db8:1:0:0:0:0:0/48", which the server reads in any notation); "wide" for a network wider than
 * that (events keep only their /24 or /48); undefined when the text is no address.
 */
export function truncateNetwork(text: string): string | "wide" | undefined {
  const [address = "", prefixText, ...rest] = text.split("/");
  if (rest.length > 0) return undefined;
  const prefix =
    prefixText === undefined ? undefined : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : Number.NaN;
  if (Number.isNaN(prefix)) return undefined;
  const v4 = ipv4Bytes(address);
  if (v4) {
    if (prefix !== undefined && (prefix > 32 || prefix < 24)) return prefix > 32 ? undefined : "wide";
    return `${v4[0]}.${v4[1]}.${v4[2]}.0/24`;
  }
  const v6 = ipv6Groups(address);
  // An IPv4-mapped address (::ffff:a.b.c.d) is the IPv4 address, as the server reads it.
  if (v6?.slice(0, 5).every((g) => g === 0) && v6[5] === 0xffff && (prefix === undefined || prefix >= 120)) {
    const [hi = 0, lo = 0] = v6.slice(6);
    return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.0/24`;
  }
  if (v6) {
    if (prefix !== undefined && (prefix > 128 || prefix < 48)) return prefix > 128 ? undefined : "wide";
    return `${v6
      .slice(0, 3)
      .map((g) => g.toString(16))
      .join(":")}:0:0:0:0:0/48`;
  }
  return undefined;
}

function ipv4Bytes(text: string): number[] | undefined {
  const parts = text.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return undefined;
  return parts.map(Number);
}

/** The eight 16-bit groups of an IPv6 address (with "::" and a dotted IPv4 tail), or undefined. */
function ipv6Groups(text: string): number[] | undefined {
  if (!text.includes(":") || !/^[0-9a-fA-F:.]+$/.test(text)) return undefined;
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const groupsOf = (part: string): number[] | undefined => {
    if (part === "") return [];
    const out: number[] = [];
    const pieces = part.split(":");
    for (const [i, piece] of pieces.entries()) {
      if (i === pieces.length - 1 && piece.includes(".")) {
        const v4 = ipv4Bytes(piece);
        if (!v4) return undefined;
        out.push(((v4[0] ?? 0) << 8) | (v4[1] ?? 0), ((v4[2] ?? 0) << 8) | (v4[3] ?? 0));
      } else if (/^[0-9a-fA-F]{1,4}$/.test(piece)) out.push(Number.parseInt(piece, 16));
      else return undefined;
    }
    return out;
  };
  const head = groupsOf(halves[0] ?? "");
  const tail = halves.length === 2 ? groupsOf(halves[1] ?? "") : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  return [...head, ...Array<number>(missing).fill(0), ...tail];
}
