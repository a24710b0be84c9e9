// 2. undici with the headers of a real Chromium request of the page, in Chromium's order (captured
// once per run from Debian's Chromium, lib/capture.mjs): the navigation's headers for the page, the
// page's fetch headers for every POST. The page's script never runs; a challenge is solved in Node.
import { httpSignup } from "../lib/httpFlow.mjs";
import { orderedSender, retarget } from "../lib/orderedHttp.mjs";

/** @type {import("./types.mjs").ClientClass[]} */
export const clients = [
  {
    id: "undici-chromium-headers",
    label: "undici 7.30.2, Chromium 156's captured headers in its order, PoW in Node",
    group: "bots",
    needs: ["chromium", "display"],
    async start(ctx) {
      const captured = await ctx.chromiumHeaders();
      return {
        async signup(door, identity) {
          const origin = door.url;
          const sender = orderedSender(door.url, (req) =>
            req.kind === "navigate"
              ? retarget(captured.navigate, req.url, { origin, referer: `${origin}/` })
              : retarget(captured.fetch, req.url, { origin, referer: `${origin}/` }),
          );
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
  },
];
