import { describe, expect, it } from "vitest";
import { emailFindings, isFreeMailDomain, looksRandom, mailboxAddress, readEmail } from "./email.js";

const weights = { disposable: 3, invalid: 1.5, randomLocal: 1 };

describe("email signal", () => {
  it("normalises plus-addressing, Gmail dots and googlemail.com to one mailbox", () => {
    expect(mailboxAddress("J.Doe+promo@GoogleMail.com")).toBe("jdoe@gmail.com");
    expect(mailboxAddress("j.d.o.e+1@gmail.com")).toBe("jdoe@gmail.com");
    // Dots are kept where the provider does not ignore them; +tags go everywhere.
    expect(mailboxAddress("jane.doe+x@outlook.com")).toBe("jane.doe@outlook.com");
    expect(mailboxAddress("ann@acme.example")).toBe("ann@acme.example");
    expect(readEmail("j.doe+a@gmail.com", undefined).normalizedHash).toBe(
      readEmail("jdoe@gmail.com", undefined).normalizedHash,
    );
  });

  it("checks syntax", () => {
    for (const bad of ["no-at-sign", "two@@example.com", "a@b", "a b@example.com", "@example.com"]) {
      const sig = readEmail(bad, undefined);
      expect(sig.valid, bad).toBe(false);
      expect(emailFindings(sig, weights).map((f) => f.id)).toContain("email_invalid");
    }
    expect(readEmail("ann.lee@example.org", undefined).valid).toBe(true);
  });

  it("tells free mail, disposable and business domains apart", () => {
    expect(isFreeMailDomain("gmail.com")).toBe(true);
    expect(isFreeMailDomain("mailinator.com")).toBe(false);
    expect(readEmail("x@mailinator.com", undefined)).toMatchObject({ disposable: true, freeMail: false });
    expect(readEmail("ann@acme-industries.com", undefined)).toMatchObject({
      disposable: false,
      freeMail: false,
    });
  });

  it("flags machine-generated local parts, not names with years or initials", () => {
    for (const random of ["x7k2q9p3m", "qzrtkwpxmv", "a1b2c3d4e5"])
      expect(looksRandom(random), random).toBe(true);
    for (const human of ["jsmith1985", "mkowalczyk", "anna.lee", "jd", "christopher"]) {
      expect(looksRandom(human), human).toBe(false);
    }
  });

  it("normalises a domain named after an Object.prototype member as itself", () => {
    expect(mailboxAddress("ann@constructor")).toBe("ann@constructor");
    expect(mailboxAddress("ann@__proto__")).toBe("ann@__proto__");
    expect(mailboxAddress("a.nn+x@googlemail.com")).toBe("ann@gmail.com");
  });

  it("with only emailSha256 there is a hash to count and nothing else to judge", () => {
    const sig = readEmail(undefined, "A".repeat(64));
    expect(sig).toMatchObject({
      hash: "a".repeat(64),
      normalizedHash: undefined,
      domain: undefined,
      valid: true,
    });
    expect(emailFindings(sig, weights)).toEqual([]);
  });
});
