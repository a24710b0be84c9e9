// Writes src/generated/scopeFields.ts of @warden/browser and @warden/client from the server's one
// list (packages/server/src/operations/verify/signals/scopeFields.ts, as built into dist/): what a
// page's worker may read differently from the page. `node scripts/scopeFields.mjs` writes both;
// each package's drift test fails when its copy differs.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const SCOPE_FIELDS_FILES = {
  browser: path.join(root, "packages/browser/src/generated/scopeFields.ts"),
  client: path.join(root, "packages/client/src/generated/scopeFields.ts"),
};

export async function renderScopeFields() {
  const { SCOPE_FIELDS } = await import(
    path.join(root, "packages/server/dist/operations/verify/signals/scopeFields.js")
  );
  return [
    "// Generated from the server's operations/verify/signals/scopeFields.ts by scripts/scopeFields.mjs: do not edit.",
    "",
    "/** What a page's worker may read differently from the page (subject.browserSignals.mismatch). */",
    `export const SCOPE_FIELDS = [${SCOPE_FIELDS.map((f) => JSON.stringify(f)).join(", ")}] as const;`,
    "",
    "export type ScopeField = (typeof SCOPE_FIELDS)[number];",
    "",
  ].join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const text = await renderScopeFields();
  for (const file of Object.values(SCOPE_FIELDS_FILES)) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
    console.log(`wrote ${path.relative(process.cwd(), file)}`);
  }
}
