import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../../../browser/tooling/chromium.mjs";
import { solvePow } from "../operations/challenge/methods/proofOfWork/proofOfWork.js";
import { emailHash } from "../operations/verify/signals/email.js";
import { StoreUnavailableError } from "../store/interfaces.js";
import { chromiumOrSkip, pastTheSecond, signedInConsole } from "../testing/chromium.js";
import {
  bearer,
  CHROME_HEADERS,
  CHROME_UA,
  faultyStore,
  makeTestApp,
  type TestApp,
} from "../testing/harness.js";

/**
 * Attempts in the console, in Debian's Chromium against a real app on a fresh SQLite file seeded
 * through the public API: people allowed at once, an attempt challenged and abandoned, two attempts
 * challenged, solved and re-verified, and one answered degraded while the store was down, its
 * challenge solved, then denied on re-verify (its email is on the tenant's deny list). The overview
 * counts a cleared attempt once (not as a challenge and an allow) and the degraded one as denied; an
 * event page shows the attempt it belongs to with a link to its other event, and tells the degraded
 * attempt's story once on either page; a search by its email finds both of its events; and feedback
 * sent on a re-verify's eventId moves the calibration of the challenged attempts.
 */
const SUITE = "attempts in the operator console";
const here = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(here, "../../../..");
const SHOTS = path.join(REPO, "artifacts/console");
const POLL_MS = 10_000;
const BLOCKED = "Lee.Blocked@Example.org";
const SEARCH_LABEL = "Email, email hash, IP or network, session or event ID";

if (chromiumOrSkip(SUITE)) {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let key: string;
  const cleared: { first: string; reverify: string }[] = [];
  const degraded = { first: "", reverify: "" };
  const failing = new Set<string>();

  const post = async (url: string, payload: Record<string, unknown>) => {
    const res = await t.app.inject({ method: "POST", url, headers: bearer(key), payload });
    expect(res.statusCode, `${url} ${res.body}`).toBe(200);
    return res.json() as Record<string, unknown> & { eventId: string };
  };
  const text = async (page: Page, testId: string) =>
    ((await page.getByTestId(testId).textContent()) ?? "").trim();

  beforeAll(async () => {
    t = await makeTestApp({
      env: { WARDEN_CONSOLE_SIGNINS_PER_MINUTE: "1000" },
      wrapStore: (s) =>
        faultyStore(s, { failing, error: () => new StoreUnavailableError("injected outage") }),
    });
    await t.tenant("shop");
    await t.store.policies.put(
      "shop",
      JSON.stringify({ deny: { emailHashes: [emailHash(BLOCKED)] } }),
      Date.now(),
    );
    key = (await t.key("shop")).apiKey;
    base = `http://localhost:${new URL(await t.app.listen({ host: "127.0.0.1", port: 0 })).port}/`;
    const person = { userAgent: CHROME_UA, headers: CHROME_HEADERS, ipTrunc: "198.51.100.0/24" };
    for (let i = 0; i < 4; i++) {
      expect(
        (await post("/v1/verify", { action: "signup", session: `s-person-${i}`, subject: person })).decision,
      ).toBe("allow");
    }
    const abandoned = await post("/v1/verify", { action: "signup", session: "s-gone", subject: {} });
    await post("/v1/challenge", { eventId: abandoned.eventId, session: "s-gone" });
    for (const session of ["s-solver-1", "s-solver-2"]) {
      const first = await post("/v1/verify", { action: "signup", session, subject: {} });
      expect(first.decision).toBe("challenge");
      const challenge = await post("/v1/challenge", { eventId: first.eventId, session });
      const instructions = challenge.instructions as { seed: string; difficulty: number };
      const { nonce } = solvePow(instructions.seed, instructions.difficulty);
      await post("/v1/challenge", { challengeId: challenge.challengeId, session, proof: { nonce } });
      const again = await post("/v1/verify", {
        action: "signup",
        session,
        subject: {},
        context: { challengeId: challenge.challengeId },
      });
      expect(again.decision).toBe("allow");
      cleared.push({ first: first.eventId, reverify: again.eventId });
    }
    // Answered degraded while the store is down; its challenge solved; the re-verify scores deny.
    const blocked = { action: "signup", session: "s-blocked", subject: { emailSha256: emailHash(BLOCKED) } };
    failing.add("counters.hit");
    const down = await post("/v1/verify", blocked);
    failing.clear();
    expect(down).toMatchObject({ decision: "challenge", degraded: true });
    await t.deps.pendingEvents.flush();
    const issued = await post("/v1/challenge", { eventId: down.eventId, session: "s-blocked" });
    const severe = issued.instructions as { seed: string; difficulty: number };
    if (severe.difficulty > 4) {
      // A degraded challenge is sealed severe here (seconds of work): the store's clear, the update a
      // valid proof makes, stands in for solving it.
      const done = await t.store.challenges.clear(
        "shop",
        issued.challengeId as string,
        "s-blocked",
        Date.now(),
      );
      expect(done.kind).toBe("cleared");
    } else {
      const { nonce } = solvePow(severe.seed, severe.difficulty);
      await post("/v1/challenge", {
        challengeId: issued.challengeId,
        session: "s-blocked",
        proof: { nonce },
      });
    }
    const denied = await post("/v1/verify", { ...blocked, context: { challengeId: issued.challengeId } });
    expect(denied.decision).toBe("deny");
    Object.assign(degraded, { first: down.eventId, reverify: denied.eventId });
    await pastTheSecond();
    fs.mkdirSync(SHOTS, { recursive: true });
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const signedIn = (width = 1360) => signedInConsole(browser, base, key, width);

  describe(SUITE, () => {
    it("the overview counts a challenged then cleared attempt once, as cleared, and a degraded then denied one once, as denied", async () => {
      for (const width of [1360, 760]) {
        const { context, page, problems } = await signedIn(width);
        await page.goto(`${base}console/#/overview`);
        const expected = {
          "attempts-total": "8",
          "attempts-allowed": "4",
          "attempts-cleared": "2",
          "attempts-challenged": "1",
          "attempts-denied": "1",
        };
        for (const [id, n] of Object.entries(expected)) {
          await expect.poll(() => text(page, id), { message: id, timeout: POLL_MS }).toBe(n);
        }
        await page.screenshot({ path: path.join(SHOTS, `overview-attempts-${width}.png`), fullPage: true });
        expect(problems).toEqual([]);
        await context.close();
      }
    }, 60_000);

    it("an event page shows its attempt and links its other event", async () => {
      const { context, page, problems } = await signedIn();
      const { first, reverify } = cleared[0] ?? { first: "", reverify: "" };
      await page.goto(`${base}console/#/events/${reverify}`);
      await expect
        .poll(() => text(page, "attempt-ending"), { timeout: POLL_MS })
        .toMatch(/^challenged, then cleared/);
      await page.getByTestId("attempt-other-event").click();
      await page.locator(`main[data-route="event:${first}"]`).waitFor();
      await expect
        .poll(() => page.getByTestId("attempt-other-event").textContent(), { timeout: POLL_MS })
        .toBe(reverify);
      await page.screenshot({ path: path.join(SHOTS, "event-attempt.png"), fullPage: true });
      expect(problems).toEqual([]);
      await context.close();
    }, 60_000);

    it("a degraded verdict, its challenge solved and the re-verify denied are one attempt, told once on each page", async () => {
      const { context, page, problems } = await signedIn();
      const main = async () => (await page.locator("main").textContent()) ?? "";
      await page.goto(`${base}console/#/events/${degraded.reverify}`);
      await expect
        .poll(() => text(page, "attempt-ending"), { timeout: POLL_MS })
        .toBe("challenged, the challenge solved, then denied: the re-verify it let be scored was a deny");
      await expect
        .poll(() => text(page, "event-challenges-elsewhere"), { timeout: POLL_MS })
        .toMatch(
          /^No challenge was issued on this re-verify: the one it carried \(chl_\S+\) was issued on its attempt's first verdict, evt_/,
        );
      expect(await main()).not.toContain("No challenge was issued for this event");
      expect(await main()).not.toContain("The challenge was not honored");
      expect(await text(page, "event-reasons")).toContain(
        "after a degraded verdict let this attempt be scored",
      );
      await page.screenshot({ path: path.join(SHOTS, "event-attempt-degraded-denied.png"), fullPage: true });

      await page.getByTestId("attempt-other-event").click();
      await page.locator(`main[data-route="event:${degraded.first}"]`).waitFor();
      await expect
        .poll(() => page.getByTestId("attempt-other-event").textContent(), { timeout: POLL_MS })
        .toBe(degraded.reverify);
      expect(await text(page, "attempt-ending")).toMatch(/then denied/);
      expect(await text(page, "event-degraded")).toBe("yes");
      expect(await text(page, "attempt-panel")).toContain("First verdict (degraded");
      expect(await main()).not.toContain("no clear was redeemed");
      await page.screenshot({ path: path.join(SHOTS, "event-attempt-degraded-first.png"), fullPage: true });

      // The search box hashes the address in the page: both events of the attempt, and nothing else.
      await page.goto(`${base}console/#/events`);
      await page.getByLabel(SEARCH_LABEL, { exact: true }).fill(BLOCKED);
      await page.getByRole("button", { name: "Search" }).click();
      const shown = () => page.getByTestId("events-table").locator("tbody th").allTextContents();
      await expect
        .poll(async () => (await shown()).sort(), { timeout: POLL_MS })
        .toEqual([degraded.first, degraded.reverify].sort());
      expect(problems).toEqual([]);
      await context.close();
    }, 60_000);

    it("every page fits a 760 px and a 1400 px window: nothing scrolls sideways", async () => {
      const { first } = cleared[0] ?? { first: "" };
      const pages: [string, string][] = [
        ["overview", "#/overview"],
        ["events", "#/events"],
        ["event", `#/events/${first}`],
        ["outcomes", "#/outcomes"],
        ["calibration", "#/calibration"],
        ["what-if", "#/what-if"],
      ];
      for (const width of [760, 1400]) {
        const { context, page, problems } = await signedIn(width);
        for (const [name, hash] of pages) {
          await page.goto(`${base}console/${hash}`);
          await page.reload();
          await page.locator("main[data-route]").waitFor();
          await expect.poll(() => page.locator(".status .loading").count(), { timeout: POLL_MS }).toBe(0);
          // Wide tables scroll inside their own box; the page itself never does.
          const overflow = (await page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth",
          )) as number;
          expect(overflow, `${name} at ${width} px`).toBeLessThanOrEqual(0);
          await page.screenshot({ path: path.join(SHOTS, `page-${name}-${width}.png`), fullPage: true });
        }
        expect(problems).toEqual([]);
        await context.close();
      }
    }, 90_000);

    it("feedback on a re-verify's eventId moves the calibration of the challenged attempts", async () => {
      const { context, page, problems } = await signedIn();
      const labelled = async () => {
        // A full load each time: the same hash again would not ask the API again.
        await page.goto(`${base}console/#/calibration`);
        await page.reload();
        await page.locator('main[data-route="calibration"]').waitFor();
        await expect.poll(() => page.locator(".status .loading").count(), { timeout: POLL_MS }).toBe(0);
        return {
          labelled: await text(page, "calibration-labelled"),
          abusive: await text(page, "calibration-abusive"),
        };
      };
      expect(await labelled()).toEqual({ labelled: "0", abusive: "0" });
      for (const { reverify } of cleared) {
        await post("/v1/feedback", { eventId: reverify, outcome: "abuse_confirmed" });
      }
      // The console's period-wide reads are reused for a few seconds: wait them out.
      await expect
        .poll(async () => (await labelled()).labelled, { timeout: 20_000, interval: 2_000 })
        .toBe("2");
      expect((await labelled()).abusive).toBe("2");
      // Every attempt was scored once: the re-verifies are part of theirs.
      expect(await text(page, "calibration-events")).toBe("8");
      await page.screenshot({ path: path.join(SHOTS, "calibration-attempts.png"), fullPage: true });
      expect(problems).toEqual([]);
      await context.close();
    }, 60_000);
  });
}
