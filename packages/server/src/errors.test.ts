import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ERROR_CATALOGUE, ERROR_LABELS, errorBody } from "./errors.js";

const apiDoc = fs.readFileSync(
  path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../docs/api.md"),
  "utf8",
);

describe("the error catalogue", () => {
  it("gives every code a status with a stable label", () => {
    for (const [code, { status }] of Object.entries(ERROR_CATALOGUE)) {
      expect(ERROR_LABELS[status], code).toBeDefined();
      expect(errorBody(code as keyof typeof ERROR_CATALOGUE).error).toBe(ERROR_LABELS[status]);
    }
  });

  it("uses the contract's labels for the contract's statuses (docs/api.md#errors)", () => {
    expect(ERROR_LABELS).toMatchObject({
      400: "bad_request",
      401: "unauthorized",
      403: "forbidden",
      404: "not_found",
      409: "conflict",
      410: "gone",
      503: "service_unavailable",
    });
  });

  it("matches the error table of docs/api.md row for row", () => {
    const section = apiDoc.split("## Errors")[1]?.split("\n## ")[0] ?? "";
    const rows = [...section.matchAll(/^\|\s*(\d{3})\s*\|\s*`([a-z_]+)`\s*\|/gm)].map((m) => [
      m[2],
      Number(m[1]),
    ]);
    expect(Object.fromEntries(rows)).toEqual(
      Object.fromEntries(Object.entries(ERROR_CATALOGUE).map(([code, { status }]) => [code, status])),
    );
  });
});
