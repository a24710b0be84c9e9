import { describe, expect, it } from "vitest";
import { fetchMetadataFindings } from "./fetchMetadata.js";

/** A JSON body with a navigation's Fetch Metadata is a program's copy of a page load's headers. */
describe("Fetch Metadata against a JSON body", () => {
  const page = { "sec-fetch-site": "same-origin", "sec-fetch-mode": "cors", "sec-fetch-dest": "empty" };
  const navigation = {
    "sec-fetch-site": "none",
    "sec-fetch-mode": "navigate",
    "sec-fetch-user": "?1",
    "sec-fetch-dest": "document",
  };
  const ids = (headers: Record<string, string>) => fetchMetadataFindings(headers, 4).map((f) => f.id);

  it("a page's fetch of JSON is what a browser sends: nothing", () => {
    expect(ids({ ...page, "content-type": "application/json" })).toEqual([]);
  });

  it("JSON with navigate, document or a user activation: automation", () => {
    for (const headers of [
      { ...navigation, "content-type": "application/json" },
      { ...page, "sec-fetch-mode": "navigate", "content-type": "application/json; charset=utf-8" },
      { ...page, "sec-fetch-dest": "document", "content-type": "application/vnd.api+json" },
      { ...page, "sec-fetch-user": "?1", "content-type": "application/json" },
    ]) {
      const [finding] = fetchMetadataFindings(headers, 4);
      expect(finding).toMatchObject({ id: "fetch_metadata_navigation_json", automation: true, logOdds: 4 });
    }
  });

  it("a form's navigation (urlencoded, multipart) or no content type: nothing", () => {
    expect(ids({ ...navigation, "content-type": "application/x-www-form-urlencoded" })).toEqual([]);
    expect(ids({ ...navigation, "content-type": "multipart/form-data; boundary=x" })).toEqual([]);
    expect(ids(navigation)).toEqual([]);
    expect(fetchMetadataFindings(undefined, 4)).toEqual([]);
  });
});
