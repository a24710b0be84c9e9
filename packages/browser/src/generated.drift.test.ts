import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { renderScopeFields, SCOPE_FIELDS_FILES } from "../../../scripts/scopeFields.mjs";
import { ROUNDS_FILE, renderRounds } from "../tooling/generateKernel.mjs";

describe("the generated rounds of the proof-of-work kernel", () => {
  it("are what tooling/generateKernel.mjs writes (rerun it after changing the generator)", () => {
    expect(fs.readFileSync(ROUNDS_FILE, "utf8")).toBe(renderRounds());
  });
});

describe("the generated scope fields", () => {
  it("are the server's list (rerun node scripts/scopeFields.mjs after changing it)", async () => {
    expect(fs.readFileSync(SCOPE_FIELDS_FILES.browser, "utf8")).toBe(await renderScopeFields());
  });
});
