import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { request } from "node:https";
import type { LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";
import type { AgentKeyRecord } from "../store/interfaces.js";
import { parseAgentJwks } from "./agentKeys.js";

/** Where an agent publishes its keys (draft-meunier-http-message-signatures-directory). */
export const DIRECTORY_PATH = "/.well-known/http-message-signatures-directory";

export interface DirectoryLimits {
  timeoutMs: number;
  maxBytes: number;
  /** Private, loopback and link-local addresses are refused unless this is set (tests only). */
  allowPrivate: boolean;
  /** Extra trusted CA certificates (PEM), for tests against a local server. */
  ca?: string;
}

export const DEFAULT_DIRECTORY_LIMITS: DirectoryLimits = Object.freeze({
  timeoutMs: 3_000,
  maxBytes: 65_536,
  allowPrivate: false,
});

export type DirectoryResult =
  | { ok: true; keys: AgentKeyRecord[]; maxAgeSeconds: number | undefined }
  | { ok: false; message: string };

/** Only public unicast addresses may be reached: no SSRF into the operator's own network. */
export function isPublicAddress(address: string): boolean {
  try {
    let addr = ipaddr.parse(address);
    if (addr.kind() === "ipv6" && (addr as ipaddr.IPv6).isIPv4MappedAddress()) {
      addr = (addr as ipaddr.IPv6).toIPv4Address();
    }
    return addr.range() === "unicast";
  } catch {
    return false;
  }
}

/** A DNS lookup that fails for addresses that are not public, checked at connect time (no rebinding gap). */
function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, "", 0);
      const usable = addresses.filter((a) => allowPrivate || isPublicAddress(a.address));
      const first = usable[0];
      if (!first) {
        const refused = Object.assign(new Error(`${hostname} resolves to no public address`), {
          code: "EADDRNOTAVAIL",
        });
        return callback(refused, "", 0);
      }
      if ((options as { all?: boolean }).all) {
        return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, usable);
      }
      return callback(null, first.address, first.family);
    });
  };
}

function maxAgeOf(cacheControl: string | undefined): number | undefined {
  const m = cacheControl?.match(/(?:^|,)\s*max-age=(\d+)/i);
  return m?.[1] ? Number(m[1]) : undefined;
}

/**
 * Fetches an agent's key directory: https only, bounded in time and size, public addresses only.
 * The body is a JWKS; keys that are not Ed25519 or RSA make the whole directory unusable.
 */
export async function fetchKeyDirectory(
  signatureAgent: string,
  limits: DirectoryLimits = DEFAULT_DIRECTORY_LIMITS,
): Promise<DirectoryResult> {
  let url: URL;
  try {
    url = new URL(DIRECTORY_PATH, signatureAgent);
  } catch {
    return { ok: false, message: `${signatureAgent} is not a URL` };
  }
  if (url.protocol !== "https:") return { ok: false, message: "key directories are fetched over https only" };
  if (!limits.allowPrivate && ipaddr.isValid(url.hostname.replace(/^\[|\]$/g, ""))) {
    if (!isPublicAddress(url.hostname.replace(/^\[|\]$/g, ""))) {
      return { ok: false, message: `${url.hostname} is not a public address` };
    }
  }
  const body = await new Promise<
    { ok: true; text: string; maxAge?: number } | { ok: false; message: string }
  >((resolve) => {
    const req = request(
      url,
      {
        method: "GET",
        headers: { accept: "application/http-message-signatures-directory+json, application/json" },
        lookup: guardedLookup(limits.allowPrivate),
        timeout: limits.timeoutMs,
        ...(limits.ca ? { ca: limits.ca } : {}),
      },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          resolve({ ok: false, message: `the directory answered HTTP ${res.statusCode}` });
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > limits.maxBytes) {
            req.destroy();
            resolve({ ok: false, message: `the directory is larger than ${limits.maxBytes} bytes` });
            return;
          }
          chunks.push(chunk);
        });
        res.on("end", () => {
          const maxAge = maxAgeOf(res.headers["cache-control"]);
          resolve({
            ok: true,
            text: Buffer.concat(chunks).toString("utf8"),
            ...(maxAge === undefined ? {} : { maxAge }),
          });
        });
        res.on("error", (err) => resolve({ ok: false, message: err.message }));
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      resolve({ ok: false, message: `the directory did not answer within ${limits.timeoutMs} ms` });
    }, limits.timeoutMs);
    req.on("close", () => clearTimeout(timer));
    req.on("timeout", () => req.destroy(new Error(`no data within ${limits.timeoutMs} ms`)));
    req.on("error", (err) => resolve({ ok: false, message: err.message }));
    req.end();
  });
  if (!body.ok) return body;
  let json: unknown;
  try {
    json = JSON.parse(body.text);
  } catch {
    return { ok: false, message: "the directory is not JSON" };
  }
  const parsed = await parseAgentJwks(json);
  if (!parsed.ok) return { ok: false, message: `the directory is not usable: ${parsed.message}` };
  return { ok: true, keys: parsed.keys, maxAgeSeconds: body.maxAge };
}
