import { describe, expect, it } from "vitest";
import { asciiDomain, DOMAIN_NAME } from "./domainName.js";

describe("asciiDomain", () => {
  it("reads every spelling of one domain as one: case, the root's dot, Unicode and its decomposed form, Punycode", () => {
    for (const spelling of [
      "bücher.example",
      "BÜCHER.example.",
      "bu\u0308cher.example",
      "xn--bcher-kva.example.",
    ]) {
      expect(asciiDomain(spelling)).toBe("xn--bcher-kva.example");
    }
    expect(asciiDomain(" Spam.Example.. ")).toBe("spam.example");
    expect(asciiDomain("пример.рф")).toBe("xn--e1afmkfd.xn--p1ai");
  });

  it("leaves what is no domain for DOMAIN_NAME to refuse", () => {
    for (const name of ["a..b", "-x.example", "example", "x_y.example", "ex ample.com", ""]) {
      expect(DOMAIN_NAME.test(asciiDomain(name)), name).toBe(false);
    }
    for (const name of ["spam.example", "sub.spam.example.", "пример.рф", "bücher.example"]) {
      expect(DOMAIN_NAME.test(asciiDomain(name)), name).toBe(true);
    }
  });
});
