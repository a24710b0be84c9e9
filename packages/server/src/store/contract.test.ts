import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { attemptContract } from "../testing/contract/attempts.js";
import { campaignContract } from "../testing/contract/campaigns.js";
import { eventSearchContract } from "../testing/contract/eventSearch.js";
import { feedbackResolutionContract } from "../testing/contract/feedbackResolutions.js";
import { insightContract } from "../testing/contract/insights.js";
import { removalContract } from "../testing/contract/removal.js";
import { storeContract } from "../testing/contract/store.js";
import { tempDir } from "../testing/harness.js";
import { openSqliteStore } from "./sqlite/sqliteStore.js";

const dir = tempDir();
const file = path.join(dir, "contract.db");
storeContract("sqlite", () => openSqliteStore({ file, busyTimeoutMs: 5000 }));
insightContract("sqlite", () =>
  openSqliteStore({ file: path.join(dir, "insights.db"), busyTimeoutMs: 5000 }),
);
campaignContract("sqlite", () =>
  openSqliteStore({ file: path.join(dir, "campaigns.db"), busyTimeoutMs: 5000 }),
);
eventSearchContract("sqlite", () =>
  openSqliteStore({ file: path.join(dir, "search.db"), busyTimeoutMs: 5000 }),
);
feedbackResolutionContract("sqlite", () =>
  openSqliteStore({ file: path.join(dir, "resolutions.db"), busyTimeoutMs: 5000 }),
);
attemptContract("sqlite", () =>
  openSqliteStore({ file: path.join(dir, "attempts.db"), busyTimeoutMs: 5000 }),
);
removalContract("sqlite", () => openSqliteStore({ file: path.join(dir, "removal.db"), busyTimeoutMs: 5000 }));

describe("sqlite adapter", () => {
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("reports an unusable database file as StoreUnavailableError", async () => {
    await expect(
      openSqliteStore({ file: path.join(dir, "not-a-dir", "\0bad"), busyTimeoutMs: 10 }),
    ).rejects.toThrow(/cannot open SQLite database/);
  });
});
