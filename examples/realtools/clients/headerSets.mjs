// 3. header-generator's header sets for Chrome, Firefox and Safari (desktop, HTTP/1), one set per
// signup, sent in the order the generator gives (undici); Content-Type, Origin and Referer added to
// POSTs as request-dependent headers, which header-generator places itself. A challenge is solved in Node.
import { HeaderGenerator } from "header-generator";
import { httpSignup } from "../lib/httpFlow.mjs";
import { orderedSender } from "../lib/orderedHttp.mjs";

/** @param {"chrome" | "firefox" | "safari"} browser @param {string} title */
const headerSet = (browser, title) => ({
  id: `header-generator-${browser}`,
  label: `header-generator 2.1.88, ${title} headers (undici), PoW in Node`,
  group: /** @type {const} */ ("bots"),
  needs: /** @type {const} */ ([]),
  /** @param {import("./types.mjs").RunContext} ctx */
  async start(ctx) {
    const generator = new HeaderGenerator({
      browsers: [browser],
      devices: ["desktop"],
      operatingSystems: browser === "safari" ? ["macos"] : ["windows", "macos", "linux"],
      locales: ["en-US", "en"],
      httpVersion: "1",
    });
    return {
      async signup(door, identity) {
        const base = generator.getHeaders();
        const host = new URL(door.url).host;
        const sender = orderedSender(door.url, (req) => {
          const extra =
            req.method === "POST"
              ? { "Content-Type": "application/json", Origin: door.url, Referer: `${door.url}/` }
              : {};
          const ordered = generator.orderHeaders({ Host: host, ...base, ...extra });
          return Object.entries(ordered);
        });
        try {
          return await httpSignup(sender.send, identity, {
            pageFields: ctx.pageModel.forgedPageFields,
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
  headerSet("chrome", "Chrome"),
  headerSet("firefox", "Firefox"),
  headerSet("safari", "Safari"),
];
