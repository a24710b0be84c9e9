import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { renderScopeFields, SCOPE_FIELDS_FILES } from "../../../scripts/scopeFields.mjs";
import { GENERATED_FILE, renderOpenapiTypes } from "../scripts/openapiTypes.mjs";

describe("the SDK's generated types", () => {
  it("match the OpenAPI document the server serves (regenerate with npm run generate:types -w @warden/client)", async () => {
    expect(fs.readFileSync(GENERATED_FILE, "utf8")).toBe(await renderOpenapiTypes());
  });
});

describe("the generated scope fields", () => {
  it("are the server's list (rerun node scripts/scopeFields.mjs after changing it)", async () => {
    expect(fs.readFileSync(SCOPE_FIELDS_FILES.client, "utf8")).toBe(await renderScopeFields());
  });
});
