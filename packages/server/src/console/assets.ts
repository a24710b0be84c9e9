import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance } from "fastify";

/** The built console (made by `npm run build` from packages/console), inside this package. */
export const CONSOLE_DIST = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  "../../assets/console",
);

/**
 * Only the console's own files run on its pages: no inline script or style, no other origin. With
 * frame-ancestors 'none' no site can frame the console to trick an operator into clicks.
 */
const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/** Serves the console's static files at /console/ (index.html for /console/). */
export async function registerConsoleAssets(app: FastifyInstance, dist = CONSOLE_DIST): Promise<void> {
  app.get("/console", { schema: { hide: true } }, async (_request, reply) => reply.redirect("/console/"));
  if (!fs.existsSync(path.join(dist, "index.html"))) {
    app.log.warn({ dist }, "the operator console is not built (npm run build): /console/ answers 404");
    return;
  }
  await app.register(fastifyStatic, {
    root: dist,
    prefix: "/console/",
    index: "index.html",
    // A dotfile (`/console/.env`) is refused, 403 forbidden_path, whether or not it exists.
    dotfiles: "deny",
    wildcard: true,
    decorateReply: false,
    schemaHide: true,
    setHeaders: (res) => {
      res.setHeader("content-security-policy", CONTENT_SECURITY_POLICY);
      res.setHeader("x-content-type-options", "nosniff");
      res.setHeader("referrer-policy", "no-referrer");
    },
  });
}
