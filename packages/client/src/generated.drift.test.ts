import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { GENERATED_FILE, renderOpenapiTypes } from "../scripts/openapiTypes.mjs";

describe("the SDK's generated types", () => {
  it("match the OpenAPI document the server serves (regenerate with npm run generate:types -w @warden/client)", async () => {
    expect(fs.readFileSync(GENERATED_FILE, "utf8")).toBe(await renderOpenapiTypes());
  });
});
