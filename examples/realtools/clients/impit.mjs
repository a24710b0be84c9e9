// 10. impit (Apify), an HTTP client that presents a browser's TLS and HTTP/2 fingerprint and headers,
// with its newest Chrome, Firefox and Safari (iOS) profiles: a fresh client per signup (its own connections),
// the page fetched with the profile's own headers, then the page's scripts and its fetch() calls with
// that browser's headers for them (lib/impersonation.mjs), a person's pace and the counts a real
// person's page sent (lib/pageEvidence.mjs, carefulPageFields); a challenge is solved in Node.
import { Impit } from "impit";
import { httpSignup, parseJson } from "../lib/httpFlow.mjs";
import { pageRequestHeaders } from "../lib/impersonation.mjs";
import { carefulPageFields } from "../lib/pageEvidence.mjs";

/**
 * A `send` over one impit client for one door.
 * @param {string} browser impit's profile name
 * @param {import("../lib/impersonation.mjs").Family} family
 * @param {string} base the door's origin
 */
export function impitSender(browser, family, base) {
  // The door's certificate is a self-signed test one (fixtures/README.md); nothing else changes.
  const client = new Impit({ browser: /** @type {any} */ (browser), ignoreTlsErrors: true, timeout: 30_000 });
  /** @type {import("../lib/httpFlow.mjs").Send} */
  return async (req) => {
    const res = await client.fetch(base + req.path, {
      method: req.method,
      headers: pageRequestHeaders(family, req, base),
      ...(req.body === undefined ? {} : { body: JSON.stringify(req.body) }),
    });
    const text = await res.text();
    return { status: res.status, text, json: parseJson(text) };
  };
}

/** @param {string} browser @param {import("../lib/impersonation.mjs").Family} family @param {string} title @returns {import("./types.mjs").ClientClass} */
const profile = (browser, family, title) => ({
  id: `impit-${browser}`,
  label: `impit 0.14.5, ${title} (TLS, HTTP/2, headers), the page's requests, PoW in Node`,
  group: "bots",
  needs: [],
  async start(ctx) {
    return {
      signup: (door, identity) =>
        httpSignup(impitSender(browser, family, door.url), identity, {
          pageFields: carefulPageFields,
          personBehaviours: ctx.personBehaviours,
        }),
      async close() {},
    };
  },
});

/** @type {import("./types.mjs").ClientClass[]} */
export const clients = [
  // The newest profile of each browser, as a careful user picks (chrome and firefox are 124 and 128).
  profile("chrome151", "chrome", "chrome151 (Chrome 151, Windows)"),
  profile("firefox144", "firefox", "firefox144 (Firefox 144, macOS)"),
  profile("ios18", "safari", "ios18 (Safari, iOS 18)"),
];
