import { SettingsService } from "@simplewebauthn/server";
import { describe, expect, it } from "vitest";
import { compilePolicy } from "./tenantPolicy.js";

/** Real roots to configure: the ones @simplewebauthn/server ships (Apple's, Google's hardware roots). */
const APPLE = SettingsService.getRootCertificates({ identifier: "apple" });
const GOOGLE = SettingsService.getRootCertificates({ identifier: "android-key" });

const withAnchors = (trustAnchors: unknown) =>
  compilePolicy(
    {
      challenge: {
        deviceAttestation: {
          rpId: "localhost",
          origins: ["http://localhost:3000"],
          attestation: "direct",
          trustAnchors,
        },
      },
    },
    "v1",
  );

describe("tenant policy: challenge.deviceAttestation.trustAnchors", () => {
  it("PEM certificates compile into the tenant's anchors, one per entry", () => {
    const r = withAnchors([...APPLE, ...GOOGLE]);
    expect(r.ok).toBe(true);
    const anchors = r.ok ? (r.policy.deviceAttestation?.trustAnchors ?? []) : [];
    expect(anchors.map((a) => a.subject)).toHaveLength(APPLE.length + GOOGLE.length);
    expect(anchors[0]?.subject).toMatch(/Apple WebAuthn Root CA/);
  });

  it("no anchors (absent or empty): the policy compiles and direct mode has nothing to chain to", () => {
    for (const trustAnchors of [undefined, []]) {
      const r = withAnchors(trustAnchors);
      expect(r.ok && r.policy.deviceAttestation?.trustAnchors).toBeUndefined();
    }
  });

  it("an entry that is not one PEM certificate is refused, with its path", () => {
    const r = withAnchors(["not a certificate", `${APPLE[0]}\n${GOOGLE[0]}`, APPLE[0]]);
    expect(r).toEqual({
      ok: false,
      errors: [
        "challenge.deviceAttestation.trustAnchors[0]: holds 0 PEM certificates; give exactly one per entry",
        "challenge.deviceAttestation.trustAnchors[1]: holds 2 PEM certificates; give exactly one per entry",
      ],
    });
    const garbled = withAnchors(["-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"]);
    expect(garbled.ok ? [] : garbled.errors).toEqual([
      "challenge.deviceAttestation.trustAnchors[0]: is not a PEM X.509 certificate",
    ]);
  });
});
