// A user-agent switcher, built the way the popular Chromium extensions of that kind work (Manifest V3):
// a declarativeNetRequest rule rewrites the User-Agent request header, and a content script in the
// page's main world redefines navigator.userAgent, appVersion and platform. It cannot reach the
// page's workers, nor the client hints (Sec-CH-UA*), which still name the real browser. Loaded into
// the person's Chromium with --load-extension, which Chromium 137+ ignores unless the feature that
// disables it is turned off (a person would install it from the store instead; the result is the same
// extension running).
import fs from "node:fs";
import path from "node:path";

export const SWITCHED_UA =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36";

const MANIFEST = {
  manifest_version: 3,
  name: "User-Agent Switcher (realtools)",
  version: "1.0.0",
  permissions: ["declarativeNetRequest"],
  host_permissions: ["<all_urls>"],
  declarative_net_request: { rule_resources: [{ id: "ua", enabled: true, path: "rules.json" }] },
  content_scripts: [
    { matches: ["<all_urls>"], js: ["page.js"], run_at: "document_start", world: "MAIN", all_frames: true },
  ],
};

const RULES = [
  {
    id: 1,
    priority: 1,
    action: {
      type: "modifyHeaders",
      requestHeaders: [{ header: "user-agent", operation: "set", value: SWITCHED_UA }],
    },
    condition: {
      resourceTypes: ["main_frame", "sub_frame", "script", "stylesheet", "xmlhttprequest", "other", "image"],
    },
  },
];

const PAGE_SCRIPT = `(() => {
  const ua = ${JSON.stringify(SWITCHED_UA)};
  const define = (name, value) => Object.defineProperty(Navigator.prototype, name, { get: () => value, configurable: true });
  define("userAgent", ua);
  define("appVersion", ua.slice("Mozilla/".length));
  define("platform", "Win32");
})();`;

/** Writes the extension into `parent` (once); returns the Chromium flags that load it. */
export function uaSwitcherArgs(parent) {
  const dir = path.join(parent, "ua-switcher-extension");
  if (!fs.existsSync(dir)) {
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, "manifest.json"), JSON.stringify(MANIFEST, null, 2));
    fs.writeFileSync(path.join(dir, "rules.json"), JSON.stringify(RULES, null, 2));
    fs.writeFileSync(path.join(dir, "page.js"), PAGE_SCRIPT);
  }
  return [`--load-extension=${dir}`, "--disable-features=DisableLoadExtensionCommandLineSwitch"];
}
