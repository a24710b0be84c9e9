import { describe, expect, it } from "vitest";
import { formDataFindings, readFormData } from "./formData.js";

describe("form data, read generically", () => {
  it("counts fields and links in free text", () => {
    const sig = readFormData(
      { name: "Ann", message: "Great deals at https://spam.test/x and www.spam.test, see [url=x]" },
      undefined,
    );
    expect(sig).toMatchObject({ present: true, fields: 2, links: 3 });
    expect(formDataFindings(sig, { perLink: 0.75, linksCap: 2 })[0]?.logOdds).toBe(2);
  });

  it("hashes long free-text values (normalised) so repeats across attempts can be counted", () => {
    const a = readFormData(
      { message: "Hello   there, I need a QUOTE for forty seats of your product" },
      undefined,
    );
    const b = readFormData(
      { body: "hello there, i need a quote for forty seats of your product" },
      undefined,
    );
    expect(a.repeatKeys).toHaveLength(1);
    expect(a.repeatKeys).toEqual(b.repeatKeys);
    expect(readFormData({ name: "Ann" }, undefined).repeatKeys).toEqual([]);
  });

  it("takes formDataHashed values as given, any structure, at most three", () => {
    const hashed = ["a".repeat(64), ["b".repeat(64), { c: "c".repeat(64), d: "d".repeat(64) }]];
    expect(readFormData(undefined, hashed).repeatKeys).toEqual([
      "a".repeat(64),
      "b".repeat(64),
      "c".repeat(64),
    ]);
    expect(readFormData(undefined, undefined)).toMatchObject({ present: false, fields: 0, links: 0 });
  });

  it("keeps each repeated text once: the same text twice, hashes differing in case, a text and its hash", () => {
    const text = "x".repeat(40);
    expect(readFormData({ a: text, b: ` ${text.toUpperCase()} ` }, undefined).repeatKeys).toHaveLength(1);
    expect(readFormData(undefined, ["0123456789abcdef", "0123456789ABCDEF"]).repeatKeys).toEqual([
      "0123456789abcdef",
    ]);
    const [hashed] = readFormData({ a: text }, undefined).repeatKeys;
    expect(readFormData({ a: text }, [hashed?.toUpperCase()]).repeatKeys).toEqual([hashed]);
  });

  it("counts three distinct texts however often one of them repeats", () => {
    const keys = readFormData(undefined, [
      "a".repeat(16),
      "A".repeat(16),
      "a".repeat(16),
      "b".repeat(16),
      "c".repeat(16),
    ]).repeatKeys;
    expect(keys).toEqual(["a".repeat(16), "b".repeat(16), "c".repeat(16)]);
  });
});
