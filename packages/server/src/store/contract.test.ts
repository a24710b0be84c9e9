import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { attemptContract } from "../testing/attemptContract.js";
import { campaignContract } from "../testing/campaignContract.js";
import { eventSearchContract } from "../testing/eventSearchContract.js";
import { feedbackResolutionContract } from "../testing/feedbackResolutionContract.js";
import { tempDir } from "../testing/harness.js";
import { insightContract } from "../testing/insightContract.js";
import { removalContract } from "../testing/removalContract.js";
import { storeContract } from "../testing/storeContract.js";
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
