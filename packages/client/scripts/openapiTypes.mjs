// Renders src/generated/openapi.ts from the OpenAPI document the server serves at /openapi.json, so
// the SDK's request and response types cannot drift from the routes' schemas. `npm run
// generate:types -w @warden/client` writes it; the SDK's drift test fails when the file differs.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import openapiTS, { astToString } from "openapi-typescript";

const here = path.dirname(fileURLToPath(import.meta.url));
export const GENERATED_FILE = path.join(here, "../src/generated/openapi.ts");
const server = path.join(here, "../../server/dist");

/** The server's OpenAPI document, from a real app on a throw-away SQLite file. */
export async function servedOpenApiDocument() {
  const { loadConfig } = await import(path.join(server, "config.js"));
  const { buildDeps, closeDeps } = await import(path.join(server, "deps.js"));
  const { buildApp } = await import(path.join(server, "app.js"));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "warden-openapi-"));
  const deps = await buildDeps(
    loadConfig({ WARDEN_DATABASE_URL: `sqlite:${path.join(dir, "w.db")}`, WARDEN_LOG_LEVEL: "silent" }),
  );
  const app = await buildApp(deps, { logger: false });
  try {
    await app.ready();
    return (await app.inject({ method: "GET", url: "/openapi.json" })).json();
  } finally {
    await app.close();
    await closeDeps(deps);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export async function renderOpenapiTypes() {
  const doc = await servedOpenApiDocument();
  const ast = await openapiTS(doc, { exportType: true });
  return `// Generated from the server's /openapi.json by scripts/openapiTypes.mjs: do not edit.\n\n${astToString(ast)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  fs.mkdirSync(path.dirname(GENERATED_FILE), { recursive: true });
  fs.writeFileSync(GENERATED_FILE, await renderOpenapiTypes());
  console.log(`wrote ${path.relative(process.cwd(), GENERATED_FILE)}`);
}
