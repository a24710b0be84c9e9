/**
 * What Warden knows of TLS client stacks by their JA4 fingerprint (FoxIO's JA4, BSD-3-Clause:
 * `<a>_<b>_<c>`, where a is protocol, version, SNI, cipher and extension counts and the first ALPN
 * value; b a hash of the sorted cipher suites; c a hash of the sorted extensions and the signature
 * algorithms).
 *
 * Browsers: the cipher-suite hash (b) of each TLS stack, which stays the same across a browser's
 * releases for years (Chromium's since about version 80, measured on Chromium 156 here). A browser
 * release that changes its cipher suites needs a new entry; until then its users meet only the weak
 * `tls_unfamiliar` finding, never an automation one.
 *
 * Libraries: the cipher suites of HTTP clients that are not browsers, measured by connecting each to
 * a TLS server that computes JA4 (read-tls-client-hello) on Node 20.20 with its bundled OpenSSL 3.0
 * and Debian 12's curl and Python, first and resumed connections. A program that edits its cipher
 * suites has another fingerprint: this list names the common tools as they come, it cannot name
 * every program.
 */

export type TlsStack = "chromium" | "nss" | "apple";

/** Cipher-suite hashes (JA4 part b) of browsers' TLS stacks over TCP. */
export const BROWSER_CIPHER_HASHES: Readonly<Record<TlsStack, readonly string[]>> = Object.freeze({
  // Chrome, Edge, Opera, Brave, Samsung Internet, Android WebView (BoringSSL).
  chromium: ["8daaf6152771"],
  // Firefox on desktop and Android (NSS): up to about 147, 148, and 153 ESR (measured on Debian's
  // firefox-esr 153.7). Firefox changes its cipher suites more often than the others.
  nss: ["5b57614c22b0", "4d8ed5baf28e", "86a278354501"],
  // Safari, every browser and WebView on iOS and iPadOS (Apple's network stack).
  apple: ["a09f3c656075"],
});

export interface KnownLibrary {
  name: string;
  /**
   * Its cipher-suite hash (JA4 part b): the library's own choice, which no browser shares. Parts a
   * and c change with a resumed session (pre_shared_key), the URL (SNI, ALPN) and the signature
   * algorithms a caller sets; the cipher suites change only when the caller edits them.
   */
  ciphers: string;
  /** Whole fingerprints it was seen with (fixtures/tls-ja4.json). */
  seen: readonly string[];
}

export const LIBRARY_FINGERPRINTS: readonly KnownLibrary[] = Object.freeze([
  {
    name: "Node.js (undici, fetch, https, axios)",
    ciphers: "a33745022dd6",
    seen: [
      "t13d5911h1_a33745022dd6_1f22a2ca17c4",
      "t13d5912h1_a33745022dd6_dbd39dd1d406",
      "t13d591000_a33745022dd6_1f22a2ca17c4",
    ],
  },
  {
    name: "got-scraping (Chrome preset)",
    ciphers: "1711a4c0508c",
    seen: ["t13d1612h2_1711a4c0508c_7bd705b301e6"],
  },
  {
    name: "got-scraping (Firefox preset)",
    ciphers: "796efca44d18",
    seen: ["t13d1812h2_796efca44d18_deba0f59a979"],
  },
  {
    name: "got-scraping (Safari preset)",
    ciphers: "df98b6d6dfe4",
    seen: ["t13d2412h2_df98b6d6dfe4_7bd705b301e6"],
  },
  { name: "curl (OpenSSL 3)", ciphers: "e8f1e7e78f70", seen: ["t13d3112h2_e8f1e7e78f70_b26ce05bbdd6"] },
  {
    name: "Python (urllib, requests)",
    ciphers: "85036bcba153",
    seen: ["t13d181100_85036bcba153_d41ae481755e"],
  },
  { name: "Go (net/http)", ciphers: "9dc949149365", seen: ["t13d190900_9dc949149365_97f8aa674fd9"] },
]);
