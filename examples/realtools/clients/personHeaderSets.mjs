// 10 (MODEL). PEOPLE on other browsers, modelled: each sends that browser's headers, in its order, for
// the page (a navigation) and for the page's fetch POSTs, plus what that browser's page would add to
// the form (lib/pageEvidence.mjs personPageFields). When challenged, the proof of work is solved in
// Node, standing in for the page's solver on the phone or laptop. These rows are a model of people,
// not people: the real one is person-chromium-xdotool. Header values are for HTTPS sites, as these
// browsers would reach a deployed signup; Chrome Android's and the WebView's client hints take the
// GREASE brand of the installed Chromium's capture (same engine version). Node cannot present these
// browsers' TLS: each declares its browser's published JA4 (modelJa4.mjs) in a test-only header that
// the door honours for these MODEL rows alone and removes before the app sees the request.
import { httpSignup } from "../lib/httpFlow.mjs";
import { orderedSender, retarget } from "../lib/orderedHttp.mjs";
import { MODEL_JA4_HEADER } from "../lib/stack.mjs";
import { MODEL_JA4 } from "./modelJa4.mjs";

const H = "{host}";
const O = "{origin}";
const R = "{referer}";

const SAFARI_IOS_UA =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 18_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.1 Mobile/15E148 Safari/604.1";
const FIREFOX_UA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:145.0) Gecko/20100101 Firefox/145.0";

/** @type {Record<string, { navigate: [string, string][], fetch: [string, string][] }>} */
const FIXED = {
  "safari-ios": {
    navigate: [
      ["Host", H],
      ["Sec-Fetch-Dest", "document"],
      ["User-Agent", SAFARI_IOS_UA],
      ["Upgrade-Insecure-Requests", "1"],
      ["Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"],
      ["Sec-Fetch-Site", "none"],
      ["Sec-Fetch-Mode", "navigate"],
      ["Accept-Language", "en-US,en;q=0.9"],
      ["Priority", "u=0, i"],
      ["Accept-Encoding", "gzip, deflate, br"],
      ["Connection", "keep-alive"],
    ],
    fetch: [
      ["Host", H],
      ["Accept", "*/*"],
      ["Sec-Fetch-Site", "same-origin"],
      ["Accept-Language", "en-US,en;q=0.9"],
      ["Accept-Encoding", "gzip, deflate, br"],
      ["Sec-Fetch-Mode", "cors"],
      ["Content-Type", "application/json"],
      ["Origin", O],
      ["User-Agent", SAFARI_IOS_UA],
      ["Referer", R],
      ["Connection", "keep-alive"],
      ["Sec-Fetch-Dest", "empty"],
      ["Priority", "u=3, i"],
    ],
  },
  firefox: {
    navigate: [
      ["Host", H],
      ["User-Agent", FIREFOX_UA],
      ["Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"],
      ["Accept-Language", "en-US,en;q=0.5"],
      ["Accept-Encoding", "gzip, deflate, br, zstd"],
      ["Connection", "keep-alive"],
      ["Upgrade-Insecure-Requests", "1"],
      ["Sec-Fetch-Dest", "document"],
      ["Sec-Fetch-Mode", "navigate"],
      ["Sec-Fetch-Site", "none"],
      ["Sec-Fetch-User", "?1"],
      ["Priority", "u=0, i"],
    ],
    fetch: [
      ["Host", H],
      ["User-Agent", FIREFOX_UA],
      ["Accept", "*/*"],
      ["Accept-Language", "en-US,en;q=0.5"],
      ["Accept-Encoding", "gzip, deflate, br, zstd"],
      ["Referer", R],
      ["Content-Type", "application/json"],
      ["Origin", O],
      ["Connection", "keep-alive"],
      ["Sec-Fetch-Dest", "empty"],
      ["Sec-Fetch-Mode", "cors"],
      ["Sec-Fetch-Site", "same-origin"],
      ["Priority", "u=4"],
    ],
  },
};

/**
 * Chromium-based mobile browsers: the installed Chromium's own capture (same engine, same order),
 * with the device's user agent and client hints in place of the desktop's.
 */
function chromiumMobile(captured, { userAgent, brand }) {
  const swap = (list) =>
    list.map(([name, value]) => {
      const lower = name.toLowerCase();
      if (lower === "user-agent") return [name, userAgent];
      if (lower === "sec-ch-ua-mobile") return [name, "?1"];
      if (lower === "sec-ch-ua-platform") return [name, '"Android"'];
      if (lower === "sec-ch-ua") {
        const grease = /"Not[^"]*";v="\d+"/.exec(value)?.[0] ?? '"Not:A-Brand";v="99"';
        const major = /"Chromium";v="(\d+)"/.exec(value)?.[1] ?? "156";
        return [name, `${grease}, "Chromium";v="${major}", "${brand}";v="${major}"`];
      }
      if (lower === "accept-encoding") return [name, "gzip, deflate, br, zstd"];
      return [name, value];
    });
  return { navigate: swap(captured.navigate), fetch: swap(captured.fetch) };
}

const major = (captured) =>
  /Chrome\/(\d+)/.exec(captured.navigate.find(([n]) => n.toLowerCase() === "user-agent")?.[1] ?? "")?.[1] ??
  "156";

/**
 * @param {"desktop" | "touch"} device how the person's page reports the filling in (lib/pageEvidence.mjs)
 * @param {"ios" | "android" | "windows"} os the operating system the user agent names, whose graphics
 *   processor and platform the page reports
 * @returns {import("./types.mjs").ClientClass}
 */
const person = (id, title, device, os, headersOf, needs) => ({
  id: `person-model-${id}`,
  label: `MODEL person: ${title} headers + the page's report`,
  group: "people",
  model: true,
  needs,
  async start(ctx) {
    const sets = await headersOf(ctx);
    const ja4 = MODEL_JA4[id];
    if (!ja4) throw new Error(`no published JA4 for the model ${id} (clients/modelJa4.mjs)`);
    return {
      async signup(door, identity) {
        const origin = door.url;
        const sender = orderedSender(door.url, (req) => [
          ...retarget(req.kind === "navigate" ? sets.navigate : sets.fetch, req.url, {
            origin,
            referer: `${origin}/`,
          }),
          // For the door only (removed there): the JA4 this browser would have presented.
          [MODEL_JA4_HEADER, ja4],
        ]);
        try {
          return await httpSignup(sender.send, identity, {
            pageFields: (page) => ctx.pageModel.personPageFields({ ...page, device, os }),
          });
        } finally {
          await sender.close();
        }
      },
      async close() {},
    };
  },
});

/** @type {import("./types.mjs").ClientClass[]} */
export const clients = [
  person("safari-ios", "Safari on iOS", "touch", "ios", async () => FIXED["safari-ios"], []),
  person("firefox", "Firefox on Windows", "desktop", "windows", async () => FIXED.firefox, []),
  person(
    "chrome-android",
    "Chrome on Android",
    "touch",
    "android",
    async (ctx) => {
      const captured = await ctx.chromiumHeaders();
      const m = major(captured);
      return chromiumMobile(captured, {
        userAgent: `Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${m}.0.0.0 Mobile Safari/537.36`,
        brand: "Google Chrome",
      });
    },
    ["chromium", "display"],
  ),
  person(
    "android-webview",
    "in-app WebView (Instagram on Android)",
    "touch",
    "android",
    async (ctx) => {
      const captured = await ctx.chromiumHeaders();
      const m = major(captured);
      return chromiumMobile(captured, {
        userAgent: `Mozilla/5.0 (Linux; Android 15; Pixel 8 Build/AP4A.250205.002; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/${m}.0.0.0 Mobile Safari/537.36 Instagram 390.0.0.43.81 Android (35/15; 420dpi; 1080x2400; Google/google; Pixel 8; shiba; shiba; en_US; 761474372)`,
        brand: "Android WebView",
      });
    },
    ["chromium", "display"],
  ),
];
