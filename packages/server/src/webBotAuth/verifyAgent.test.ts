import { createPrivateKey, type JsonWebKey } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { compileAgentHosts } from "./agentHosts.js";
import { signatureCheckFor } from "./agentKeys.js";
import { readSignatures, type SignatureAlgorithm } from "./messageSignature.js";
import { signatureBase } from "./signatureBase.js";
import { signRequest } from "./signRequest.js";
import { type KeyLookup, type KnownAgentKey, verifyAgent } from "./verifyAgent.js";

/** Public RFC 9421 and Web Bot Auth draft test vectors, shipped as a fixture (fixtures/web-bot-auth.json). */
interface Vector {
  name: string;
  alg: SignatureAlgorithm;
  keyid: string;
  verifyAt: number;
  request: { method: string; url: string; headers: Record<string, string> };
  signatureInput: string;
  signature: string;
  signatureBase: string;
  agent?: string;
}
const VECTORS = JSON.parse(
  readFileSync(new URL("./fixtures/web-bot-auth.json", import.meta.url), "utf8"),
) as {
  keys: Record<string, { jwkPublic: JsonWebKey; jwkPrivate?: JsonWebKey; jwkThumbprint: string }>;
  vectors: Vector[];
};

const AGENT = "https://signature-agent.test";
const ED = VECTORS.keys["test-key-ed25519"];
const RSA = VECTORS.keys["test-key-rsa-pss"];
if (!ED?.jwkPrivate || !RSA) throw new Error("fixtures/web-bot-auth.json lacks its keys");
const ED_PRIVATE = createPrivateKey({ key: ED.jwkPrivate, format: "jwk" });

/**
 * The v2 vectors are valid for 100 years (created 2025-01-01, expires 2124-12-07): far beyond the
 * 24 h accepted by default. The vector tests accept that window explicitly, so they keep proving the
 * signature bytes; the default's refusal of them is tested below.
 */
const VECTOR_VALIDITY_SECONDS = 4_889_289_600 - 1_735_689_600;

function known(
  jwk: JsonWebKey,
  alg: SignatureAlgorithm,
  signatureAgent = AGENT,
  /** null: the key carries none, so verify applies its 24 h default. */
  maxValiditySeconds: number | null = VECTOR_VALIDITY_SECONDS,
): KnownAgentKey {
  return {
    operator: "Test Operator",
    signatureAgent,
    alg,
    check: signatureCheckFor(jwk as never, alg),
    ...(maxValiditySeconds === null ? {} : { maxValiditySeconds }),
  };
}
/** The registry of these tests: both vector keys by thumbprint, and the RFC key by its name. */
const REGISTRY: Record<string, KnownAgentKey> = {
  [ED.jwkThumbprint]: known(ED.jwkPublic, "ed25519"),
  [RSA.jwkThumbprint]: known(RSA.jwkPublic, "rsa-pss-sha512"),
  "test-key-ed25519": known(ED.jwkPublic, "ed25519"),
};
const lookup: KeyLookup = (keyid) => REGISTRY[keyid];

/** The forwarded form of a vector's request: its headers plus the request line as pseudo-headers. */
function forwarded(v: Vector, extra: Record<string, string> = {}): Record<string, string> {
  const url = new URL(v.request.url);
  return {
    ...v.request.headers,
    ":method": v.request.method,
    ":scheme": url.protocol.slice(0, -1),
    ":path": `${url.pathname}${url.search}`,
    "signature-input": v.signatureInput,
    signature: v.signature,
    ...extra,
  };
}
const at = (v: Vector) => ({ now: v.verifyAt, skewSeconds: 60 });
const vector = (name: string): Vector => {
  const v = VECTORS.vectors.find((x) => x.name === name);
  if (!v) throw new Error(`no vector ${name}`);
  return v;
};

describe("RFC 9421 signature base", () => {
  it.each(VECTORS.vectors.map((v) => [v.name, v] as const))("%s: the base matches the vector", (_n, v) => {
    const parsed = readSignatures({ headers: forwarded(v) });
    if (!parsed.ok) throw new Error(parsed.why);
    const [sig] = parsed.signatures;
    if (!sig) throw new Error("no signature parsed");
    expect(signatureBase({ headers: forwarded(v) }, sig)).toEqual({ ok: true, base: v.signatureBase });
  });
});

describe("Web Bot Auth vectors", () => {
  const webBotAuth = VECTORS.vectors.filter((v) => v.name !== "rfc9421-b26-ed25519");
  it.each(webBotAuth.map((v) => [v.name, v] as const))("%s verifies at verifyAt", (_n, v) => {
    const result = verifyAgent({ headers: forwarded(v) }, lookup, at(v));
    expect(result).toMatchObject({
      outcome: "verified",
      keyid: v.keyid,
      alg: v.alg,
      operator: "Test Operator",
    });
    expect(result.outcome === "verified" && result.signatureAgent).toBe(v.agent ?? undefined);
  });

  it("a plain RFC 9421 signature (B.2.6, no web-bot-auth tag) identifies no agent", () => {
    const v = vector("rfc9421-b26-ed25519");
    expect(verifyAgent({ headers: forwarded(v) }, lookup, at(v))).toMatchObject({ outcome: "unverified" });
  });

  it("no signature headers: absent", () => {
    expect(verifyAgent({ headers: { host: "example.com" } }, lookup, { now: 0, skewSeconds: 60 })).toEqual({
      outcome: "absent",
    });
  });
});

describe("Web Bot Auth negative cases", () => {
  const dict = vector("wba-v2-ed25519-dictionary-agent");
  const expired = vector("wba-v1-ed25519-legacy-string-agent");

  /** A fresh Ed25519 signature by the vector key over `headers`, with overrides. */
  function signed(
    headers: Record<string, string>,
    o: Partial<Parameters<typeof signRequest>[2]> = {},
  ): Record<string, string> {
    const { signature, signatureInput } = signRequest(headers, ED_PRIVATE, {
      components: ["@authority", ["signature-agent", { key: "agent1" }]],
      keyid: ED?.jwkThumbprint ?? "",
      alg: "ed25519",
      created: 1_800_000_000,
      expires: 1_800_000_300,
      nonce: "bm9uY2U=",
      ...o,
    });
    return { ...headers, signature, "signature-input": signatureInput };
  }
  const base = { host: "example.com", "signature-agent": `agent1="${AGENT}"` };
  const now = { now: 1_800_000_100, skewSeconds: 60 };

  it("the reference signer's signatures verify (dictionary form)", () => {
    expect(verifyAgent({ headers: signed(base) }, lookup, now)).toMatchObject({
      outcome: "verified",
      signatureAgent: AGENT,
    });
  });

  it("tag other than web-bot-auth: not a Web Bot Auth identity", () => {
    const h = forwarded(dict, {
      "signature-input": dict.signatureInput.replace('tag="web-bot-auth"', 'tag="web-bot-auth2"'),
    });
    expect(verifyAgent({ headers: h }, lookup, at(dict)).outcome).toBe("unverified");
  });

  it("clock after expires (beyond the skew): rejected", () => {
    expect(verifyAgent({ headers: forwarded(expired) }, lookup, at(expired)).outcome).toBe("verified");
    const late = { now: 1735693200 + 61, skewSeconds: 60 };
    expect(verifyAgent({ headers: forwarded(expired) }, lookup, late)).toMatchObject({
      outcome: "invalid",
      why: "the signature has expired",
    });
    expect(verifyAgent({ headers: forwarded(expired) }, lookup, { ...late, now: late.now - 2 }).outcome).toBe(
      "verified",
    );
  });

  it("created in the future beyond the skew: rejected; within it: accepted", () => {
    expect(
      verifyAgent({ headers: signed(base) }, lookup, { now: 1_800_000_000 - 61, skewSeconds: 60 }),
    ).toMatchObject({ outcome: "invalid", why: "created is in the future" });
    expect(
      verifyAgent({ headers: signed(base) }, lookup, { now: 1_800_000_000 - 59, skewSeconds: 60 }).outcome,
    ).toBe("verified");
  });

  it("neither @authority nor @target-uri covered: rejected", () => {
    const h = signed(
      { ...base, date: "x" },
      { components: ["date", ["signature-agent", { key: "agent1" }]] },
    );
    expect(verifyAgent({ headers: h }, lookup, now)).toMatchObject({ outcome: "invalid" });
  });

  it("@target-uri instead of @authority is accepted when the request line was forwarded", () => {
    const h = signed(
      { ...base, ":path": "/signup", ":method": "POST" },
      { components: ["@target-uri", ["signature-agent", { key: "agent1" }]] },
    );
    expect(verifyAgent({ headers: h }, lookup, now).outcome).toBe("verified");
  });

  it("a covered derived component the integration did not forward: unverified, not invalid", () => {
    const h = signed({ host: "example.com", ":method": "POST" }, { components: ["@authority", "@method"] });
    expect(verifyAgent({ headers: h }, lookup, now).outcome).toBe("verified");
    const withoutMethod: Record<string, string> = { ...h };
    delete withoutMethod[":method"];
    expect(verifyAgent({ headers: withoutMethod }, lookup, now)).toMatchObject({ outcome: "unverified" });
  });

  it("Signature-Agent present but not covered: rejected", () => {
    const h = signed(base, { components: ["@authority"] });
    expect(verifyAgent({ headers: h }, lookup, now)).toMatchObject({
      outcome: "invalid",
      why: "Signature-Agent is sent but not covered by the signature",
    });
  });

  it("dictionary member key changed (agent2 -> agent3) without re-signing: rejected", () => {
    const h = forwarded(dict, { "signature-agent": `agent3="${AGENT}"` });
    expect(verifyAgent({ headers: h }, lookup, at(dict)).outcome).toBe("invalid");
    const both = forwarded(dict, {
      "signature-agent": `agent3="${AGENT}"`,
      "signature-input": dict.signatureInput.replace('key="agent2"', 'key="agent3"'),
    });
    expect(verifyAgent({ headers: both }, lookup, at(dict)).outcome).toBe("invalid");
  });

  it("Signature-Agent value changed after signing: rejected", () => {
    const h = forwarded(dict, { "signature-agent": `agent2="https://signature-agent.test/evil"` });
    expect(verifyAgent({ headers: h }, lookup, at(dict))).toMatchObject({
      outcome: "invalid",
      why: "the signature does not match the request",
    });
  });

  it("signature label renamed in both headers (sig2 -> sig9): still valid (RFC 9421 §7.2.5)", () => {
    const h = forwarded(dict, {
      "signature-input": dict.signatureInput.replace(/^sig2=/, "sig9="),
      signature: dict.signature.replace(/^sig2=/, "sig9="),
    });
    expect(verifyAgent({ headers: h }, lookup, at(dict)).outcome).toBe("verified");
  });

  it("a signature that covers no components: rejected", () => {
    const h = signed({ host: "example.com" }, { components: [] });
    expect(verifyAgent({ headers: h }, lookup, now)).toMatchObject({
      outcome: "invalid",
      why: "the signature covers no components",
    });
  });

  it("one byte of the signature flipped: rejected", () => {
    const bytes = Buffer.from(dict.signature.slice("sig2=:".length, -1), "base64");
    bytes[10] = (bytes[10] ?? 0) ^ 0x01;
    const h = forwarded(dict, { signature: `sig2=:${bytes.toString("base64")}:` });
    expect(verifyAgent({ headers: h }, lookup, at(dict))).toMatchObject({ outcome: "invalid" });
  });

  it("keyid not known for that Signature-Agent: unverified, not invalid", () => {
    const other: KeyLookup = (k) =>
      k === ED.jwkThumbprint ? known(ED.jwkPublic, "ed25519", "https://other.test") : undefined;
    expect(verifyAgent({ headers: forwarded(dict) }, other, at(dict))).toMatchObject({
      outcome: "unverified",
      why: "the key is not registered for that Signature-Agent",
    });
    expect(verifyAgent({ headers: forwarded(dict) }, () => undefined, at(dict))).toMatchObject({
      outcome: "unverified",
      keyid: dict.keyid,
    });
  });

  it("HMAC algorithms: rejected", () => {
    const h = forwarded(dict, {
      "signature-input": dict.signatureInput.replace('alg="ed25519"', 'alg="hmac-sha256"'),
    });
    expect(verifyAgent({ headers: h }, lookup, at(dict))).toMatchObject({
      outcome: "invalid",
      why: "algorithm hmac-sha256 is not accepted (Ed25519 or RSA-PSS-SHA512 only)",
    });
  });

  it("malformed signature headers are invalid, never an exception", () => {
    for (const headers of [
      { ...base, signature: "sig1=:AAAA:" },
      { ...base, signature: "not a dictionary ((", "signature-input": "sig1=(" },
      { ...base, signature: "sig1=:AAAA:", "signature-input": 'sig1="@authority"' },
    ]) {
      expect(verifyAgent({ headers }, lookup, now).outcome).toBe("invalid");
    }
  });

  it("step-up: the nonce and key must be the ones required", () => {
    const h = signed(base, { nonce: "step-up-nonce" });
    const keyid = ED.jwkThumbprint;
    expect(
      verifyAgent({ headers: h }, lookup, { ...now, require: { nonce: "step-up-nonce", keyid } }).outcome,
    ).toBe("verified");
    expect(verifyAgent({ headers: h }, lookup, { ...now, require: { nonce: "other" } })).toMatchObject({
      outcome: "invalid",
    });
    expect(
      verifyAgent({ headers: h }, lookup, {
        ...now,
        require: { nonce: "step-up-nonce", keyid: RSA.jwkThumbprint },
      }),
    ).toMatchObject({ outcome: "invalid" });
  });
});

describe("signature lifetime", () => {
  const dict = vector("wba-v2-ed25519-dictionary-agent");
  /** The vector key as a registry without an explicit window has it: the 24 h default. */
  const byDefault: KeyLookup = (k) =>
    k === ED.jwkThumbprint ? known(ED.jwkPublic, "ed25519", AGENT, null) : undefined;
  const headers = { host: "example.com", "signature-agent": `agent1="${AGENT}"` };
  const sign = (created: number, expires: number) => {
    const { signature, signatureInput } = signRequest(headers, ED_PRIVATE, {
      components: ["@authority", ["signature-agent", { key: "agent1" }]],
      keyid: ED.jwkThumbprint,
      alg: "ed25519",
      created,
      expires,
    });
    return { ...headers, signature, "signature-input": signatureInput };
  };
  const now = { now: 1_800_000_100, skewSeconds: 60 };

  it("the public v2 vector, valid for 100 years, is refused under the 24 h default", () => {
    expect(verifyAgent({ headers: forwarded(dict) }, byDefault, at(dict))).toMatchObject({
      outcome: "invalid",
      why: "the signature is valid for 3153600000 s, longer than the 86400 s Warden accepts",
    });
  });

  it("a window of exactly the maximum verifies; one second more is invalid", () => {
    const created = 1_800_000_000;
    expect(verifyAgent({ headers: sign(created, created + 86_400) }, byDefault, now).outcome).toBe(
      "verified",
    );
    expect(verifyAgent({ headers: sign(created, created + 86_401) }, byDefault, now)).toMatchObject({
      outcome: "invalid",
      why: expect.stringMatching(/longer than the 86400 s/),
    });
    const shorter: KeyLookup = (k) =>
      k === ED.jwkThumbprint ? known(ED.jwkPublic, "ed25519", AGENT, 300) : undefined;
    expect(verifyAgent({ headers: sign(created, created + 301) }, shorter, now).outcome).toBe("invalid");
  });

  it("expires equal to or before created: invalid, whatever the clock", () => {
    for (const [created, expires] of [
      [1_800_000_000, 1_800_000_000],
      [1_800_000_200, 1_800_000_000],
    ] as const) {
      expect(verifyAgent({ headers: sign(created, expires) }, lookup, now)).toMatchObject({
        outcome: "invalid",
        why: "expires is not later than created",
      });
    }
  });

  it("a key that more than one operator claims identifies none of them", () => {
    const ambiguous: KeyLookup = () => ({ ambiguous: true });
    expect(verifyAgent({ headers: sign(1_800_000_000, 1_800_000_300) }, ambiguous, now)).toEqual({
      outcome: "unverified",
      why: "the key is registered for more than one operator, so it identifies none",
      keyid: ED.jwkThumbprint,
      signatureAgent: AGENT,
    });
  });
});

describe("the signed host and the tenant's hosts", () => {
  const dict = vector("wba-v2-ed25519-dictionary-agent");
  const hosts = (...entries: string[]) => {
    const compiled = compileAgentHosts(entries, "webBotAuthHosts");
    if (compiled.errors.length > 0) throw new Error(compiled.errors.join("; "));
    return compiled.hosts;
  };
  const now = { now: 1_800_000_100, skewSeconds: 60 };
  const signedFor = (host: string) => {
    const headers = { host, "signature-agent": `agent1="${AGENT}"` };
    const { signature, signatureInput } = signRequest(headers, ED_PRIVATE, {
      components: ["@authority", ["signature-agent", { key: "agent1" }]],
      keyid: ED.jwkThumbprint,
      alg: "ed25519",
      created: 1_800_000_000,
      expires: 1_800_000_300,
    });
    return { ...headers, signature, "signature-input": signatureInput };
  };

  it("the public vector (signed for example.com) replayed to a tenant of shop.example: invalid", () => {
    expect(verifyAgent({ headers: forwarded(dict) }, lookup, at(dict)).outcome).toBe("verified");
    expect(
      verifyAgent({ headers: forwarded(dict) }, lookup, { ...at(dict), hosts: hosts("shop.example") }),
    ).toMatchObject({
      outcome: "invalid",
      why: 'the signature was made for "example.com", not one of the tenant\'s hosts',
      keyid: dict.keyid,
    });
    expect(
      verifyAgent({ headers: forwarded(dict) }, lookup, { ...at(dict), hosts: hosts("Example.COM.") })
        .outcome,
    ).toBe("verified");
  });

  it("a listed host verifies whatever its case, port or trailing dot; a wildcard covers subdomains", () => {
    const list = hosts("shop.example", "*.shop.example", "bücher.example");
    for (const host of [
      "shop.example",
      "SHOP.example",
      "shop.example:443",
      "shop.example:8443",
      "shop.example.",
      "eu.api.shop.example",
      "xn--bcher-kva.example",
    ]) {
      expect(verifyAgent({ headers: signedFor(host) }, lookup, { ...now, hosts: list }).outcome, host).toBe(
        "verified",
      );
    }
    for (const host of ["other.example", "shopexample", "shop.example.evil", "evil-shop.example"]) {
      expect(verifyAgent({ headers: signedFor(host) }, lookup, { ...now, hosts: list }).outcome, host).toBe(
        "invalid",
      );
    }
  });

  it("the host was not forwarded: unverified (the request cannot be checked), not a replay", () => {
    const h: Record<string, string> = { ...signedFor("shop.example") };
    delete h.host;
    expect(verifyAgent({ headers: h }, lookup, { ...now, hosts: hosts("shop.example") })).toMatchObject({
      outcome: "unverified",
    });
  });
});
