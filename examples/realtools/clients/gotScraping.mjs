// 1. got-scraping: browser-like headers from header-generator (its defaults), the signup JSON posted
// directly (the page's script never runs); a challenge is solved in Node and the form sent again.
import { gotScraping } from "got-scraping";
import { httpSignup, parseJson } from "../lib/httpFlow.mjs";

/** @type {import("./types.mjs").ClientClass[]} */
export const clients = [
  {
    id: "got-scraping",
    label: "got-scraping 4.2.1 (header-generator headers), PoW in Node",
    group: "bots",
    needs: [],
    async start(ctx) {
      return {
        async signup(door, identity) {
          // One header set per signup, as got-scraping keeps it for a session.
          const sessionToken = {};
          /** @type {import("../lib/httpFlow.mjs").Send} */
          const send = async ({ method, path, body }) => {
            const res = await gotScraping({
              url: door.url + path,
              method,
              ...(body === undefined ? {} : { json: body }),
              sessionToken,
              throwHttpErrors: false,
              followRedirect: false,
              retry: { limit: 0 },
              // The door's test certificate (fixtures/README.md); got-scraping's TLS is otherwise its own.
              https: { rejectUnauthorized: false },
              timeout: { request: 30_000 },
            });
            return { status: res.statusCode, text: res.body, json: parseJson(res.body) };
          };
          return httpSignup(send, identity, {
            pageFields: ctx.pageModel.forgedPageFields,
          });
        },
        async close() {},
      };
    },
  },
];
