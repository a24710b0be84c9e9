import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { ROUNDS_FILE, renderRounds } from "../tooling/generateKernel.mjs";

describe("the generated rounds of the proof-of-work kernel", () => {
  it("are what tooling/generateKernel.mjs writes (rerun it after changing the generator)", () => {
    expect(fs.readFileSync(ROUNDS_FILE, "utf8")).toBe(renderRounds());
  });
});
