// What a careful user of a TLS-impersonating HTTP client (impit, curl_cffi) changes in the headers
// its tool sends for the browser it impersonates: the tool's own headers are a navigation's, so the
// page's scripts and the page's fetch() get the headers that browser sends for them (Accept, the
// Fetch Metadata, Origin and Referer, Priority), and the navigation-only ones are removed.

/** @typedef {"chrome" | "firefox" | "safari"} Family */

/** Priority (RFC 9218) as each browser sends it for a fetch() and for a module script. */
const PRIORITY = {
  chrome: { fetch: "u=1, i", script: "u=1" },
  firefox: { fetch: "u=4", script: "u=2" },
  safari: { fetch: "u=3, i", script: "u=2" },
};

/**
 * The headers to set over the tool's own for one request; a value of "" removes the tool's header
 * (impit's convention; the curl_cffi bridge drops it too).
 * @param {Family} family
 * @param {import("./httpFlow.mjs").HttpRequest} req
 * @param {string} origin the door's origin (https://localhost:<port>)
 * @returns {[string, string][]}
 */
export function pageRequestHeaders(family, req, origin) {
  if (req.kind === "navigate") return [];
  const common = [
    ["upgrade-insecure-requests", ""],
    ["sec-fetch-user", ""],
    ["sec-fetch-site", "same-origin"],
    ["sec-fetch-mode", "cors"],
    ["referer", `${origin}/`],
    ["priority", PRIORITY[family][req.kind === "script" ? "script" : "fetch"]],
  ];
  if (req.kind === "script") {
    return [...common, ["accept", "*/*"], ["sec-fetch-dest", "script"]];
  }
  return [
    ...common,
    ["accept", "*/*"],
    ["sec-fetch-dest", "empty"],
    ["origin", origin],
    ...(req.body === undefined ? [] : [["content-type", "application/json"]]),
  ];
}
