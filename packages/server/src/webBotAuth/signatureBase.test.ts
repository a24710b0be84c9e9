import fc from "fast-check";
import { httpbis } from "http-message-signatures";
import { type Item, serializeInnerList, serializeItem } from "structured-headers";
import { describe, expect, it } from "vitest";
import type { MessageSignature } from "./messageSignature.js";
import { requestUrl, signatureBase } from "./signatureBase.js";

/** The reference: http-message-signatures (ISC) builds the base of the same signature. */
function libraryBase(headers: Record<string, string>, sig: MessageSignature): string | undefined {
  try {
    const lines = httpbis.createSignatureBase(
      { fields: sig.components.map((c) => c.serialized) },
      { method: headers[":method"] ?? "GET", url: requestUrl(headers), headers: { ...headers } },
    );
    lines.push(['"@signature-params"', [sig.signatureParams]]);
    return httpbis.formatSignatureBase(lines);
  } catch {
    return undefined;
  }
}

function signatureOf(items: Item[]): MessageSignature {
  return {
    label: "sig1",
    components: items.map((i) => ({ name: i[0] as string, params: i[1], serialized: serializeItem(i) })),
    params: {},
    signatureParams: serializeInnerList([items, new Map([["created", 1]])]),
    signature: Buffer.alloc(0),
  };
}

const token = fc.stringMatching(/^[a-z][a-z0-9-]{0,6}$/);
const headerValue = fc.oneof(
  fc.stringMatching(/^[ -~]{0,24}$/),
  // dictionaries, lists and items, so `key` and `sf` find structure
  fc
    .array(
      fc.tuple(
        token,
        fc.oneof(fc.constant("?1"), fc.stringMatching(/^"[a-z:/.]{0,12}"$/), fc.nat().map(String)),
      ),
      {
        minLength: 1,
        maxLength: 3,
      },
    )
    .map((members) => members.map(([k, v]) => `${k}=${v}`).join(", ")),
  fc.array(token, { minLength: 1, maxLength: 3 }).map((xs) => xs.join(", ")),
  fc.constant("  folded\n  value "),
);
const request = fc.record({
  host: fc.constantFrom("example.com", "EXAMPLE.com:8443", "example.com:443", "agent.test:80", "[::1]:8080"),
  ":scheme": fc.constantFrom("https", "http"),
  ":method": fc.constantFrom("GET", "post", "PUT"),
  ":path": fc.constantFrom("/", "/a/b?x=1&y=2&x=3", "/p%20q?name=a%20b", "/?", "/a/../b?q="),
  "x-one": headerValue,
  "x-two": headerValue,
});
const component = fc.oneof(
  fc.constantFrom<Item>(
    ["@method", new Map()],
    ["@authority", new Map()],
    ["@scheme", new Map()],
    ["@target-uri", new Map()],
    ["@path", new Map()],
    ["@query", new Map()],
    ["@request-target", new Map()],
    ["@query-param", new Map([["name", "x"]])],
    ["@query-param", new Map([["name", "missing"]])],
  ),
  fc
    .tuple(
      fc.constantFrom("x-one", "x-two", "x-absent"),
      fc.constantFrom<[string, string | boolean][]>(
        [],
        [["sf", true]],
        [["bs", true]],
        [
          ["bs", true],
          ["sf", true],
        ],
      ),
      fc.option(token, { nil: undefined }),
    )
    .map(
      ([name, params, key]): Item => [name, new Map([...params, ...(key ? [["key", key] as const] : [])])],
    ),
);

describe("signature base", () => {
  it("is the reference library's base, or fails where it fails", () => {
    const outcomes = { built: 0, refused: 0 };
    fc.assert(
      fc.property(request, fc.array(component, { minLength: 1, maxLength: 5 }), (headers, items) => {
        const sig = signatureOf(items);
        const ours = signatureBase({ headers }, sig);
        const reference = libraryBase(headers, sig);
        // A bare-key member (`a, b`) parses as a list first in the library, which then refuses
        // `key`; RFC 9421 §2.1.2 reads the field as a dictionary, as Warden does.
        const listFirst = items.some((i) => i[1].has("key") && !/=/.test(headers[i[0] as "x-one"] ?? "="));
        if (listFirst) return;
        outcomes[reference === undefined ? "refused" : "built"]++;
        expect(ours).toEqual(
          reference === undefined ? expect.objectContaining({ ok: false }) : { ok: true, base: reference },
        );
      }),
      { numRuns: 2000 },
    );
    // Both kinds of case were exercised, not just one.
    expect(outcomes.built).toBeGreaterThan(200);
    expect(outcomes.refused).toBeGreaterThan(200);
  });

  it("names the missing header and the missing dictionary member", () => {
    const sig = signatureOf([["signature-agent", new Map([["key", "agent2"]])]]);
    expect(signatureBase({ headers: { host: "a.test" } }, sig)).toEqual({
      ok: false,
      why: 'No header "signature-agent" found in headers',
    });
    expect(
      signatureBase({ headers: { host: "a.test", "signature-agent": 'agent1="https://a.test"' } }, sig),
    ).toEqual({
      ok: false,
      why: 'Unable to find key "agent2" in structured field',
    });
  });
});
