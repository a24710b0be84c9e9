import { type ChildProcess, spawn } from "node:child_process";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../../../browser/tooling/chromium.mjs";
import { chromiumOrSkip } from "./chromium.js";
import { bearer, makeTestApp, type TestApp } from "./harness.js";
import { glueLines, installExample, type PackedExample } from "./packedExample.js";
import { fillLikeAPerson } from "./person.js";

/**
 * One example app of examples/ as a user runs it: packed and installed outside the repository (the
 * guide's commands), built with its strict TypeScript, started with `npm start` against a real
 * Warden, and driven in Chromium through its plain HTML form (no script of the page's own): a
 * person-paced browser is allowed with the page's evidence and its account's feedback reaches
 * Warden; the form posted by a program without its page is refused; a challenged person solves on
 * the gate's page and is created after the re-verify. Every example runs the same suite, and its
 * glue is counted: the server's code and the page's lines that name Warden, at most 40.
 */
export interface ExampleFiles {
  /** The server's code: every line that is not blank or a comment is glue. */
  server: string[];
  /** The pages: their lines that name Warden are glue. */
  pages: string[];
  /**
   * What the app prints once it serves, its address the first group (default: the examples' own
   * `Signup (Framework) on http://…` line); for a framework's own start command, its own line.
   */
  ready?: RegExp;
  /** Environment of the example's build and start, beside Warden's variables. */
  env?: Record<string, string>;
}

export function exampleSuite(example: string, files: ExampleFiles): void {
  const SUITE = `examples/${example}, installed from its tarballs, in Chromium`;
  const PERSON_UA =
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36";
  const ADMIN_TOKEN = "admin-token-for-the-example-test";
  /** Where every browser of this suite comes from, as Warden reads it (the gate truncates the address). */
  const LOOPBACK = "127.0.0.0/24";

  describe(`examples/${example}'s glue`, () => {
    it("is at most 40 lines: the server's code and the page's lines that name Warden", () => {
      expect(glueLines(example, files.server, files.pages)).toBeLessThanOrEqual(40);
    });
  });

  if (chromiumOrSkip(SUITE)) {
    let warden: TestApp;
    let installed: PackedExample;
    let server: ChildProcess;
    let url: string;
    let browser: Browser;

    beforeAll(async () => {
      warden = await makeTestApp({ env: { WARDEN_RATE_LIMIT_MAX: "100000" } });
      const wardenUrl = await warden.app.listen({ host: "127.0.0.1", port: 0 });
      await warden.tenant("shop");
      // One sign-up an hour per network, and a form whose page never ran is a program's; this suite's
      // browsers all come from one machine, which Warden would otherwise count as a campaign.
      await warden.store.policies.put(
        "shop",
        JSON.stringify({
          requirePage: true,
          velocity: { ip_network: { perHour: 1 } },
          campaign: { floor: 100_000 },
        }),
        Date.now(),
      );
      const { apiKey } = await warden.key("shop");
      [installed, browser] = await Promise.all([
        installExample(example, files.env),
        launchChromium(["--disable-blink-features=AutomationControlled", `--user-agent=${PERSON_UA}`]),
      ]);
      server = spawn("npm", ["start"], {
        cwd: installed.dir,
        env: {
          ...process.env,
          WARDEN_URL: wardenUrl,
          WARDEN_API_KEY: apiKey,
          WARDEN_TENANT: "shop",
          WARDEN_TICKET_SECRET: "a-ticket-secret-of-at-least-32-characters",
          ADMIN_TOKEN,
          ...files.env,
          // This machine runs Warden, the app and Chromium at once (and CI other suites beside them).
          WARDEN_VERIFY_TIMEOUT_MS: "5000",
          PORT: "0",
        },
        stdio: ["ignore", "pipe", "inherit"],
        // Its own process group: npm and the node it starts are stopped together.
        detached: true,
      });
      url = await new Promise<string>((resolve, reject) => {
        let out = "";
        server.stdout?.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          const address = (files.ready ?? /Signup \(\w+\) on (http:\/\/\S+)/).exec(out)?.[1];
          if (address) resolve(address);
        });
        server.once("exit", (code) => reject(new Error(`the example exited (${code}): ${out}`)));
      });
    }, 300_000);

    afterAll(async () => {
      if (server?.pid !== undefined && server.exitCode === null) process.kill(-server.pid, "SIGTERM");
      await browser?.close();
      await warden?.close();
      installed?.remove();
    });

    /** Opens the form once its page token has arrived (Warden counts the page as loaded from then). */
    async function open(): Promise<{ p: Page; loadedAt: number }> {
      const p = await (await browser.newContext()).newPage();
      p.on("pageerror", (e) => problems.push(e.message));
      const token = p.waitForResponse((r) => r.url().endsWith("/warden/challenge/page"));
      await p.goto(url);
      expect((await token).status()).toBe(200);
      return { p, loadedAt: Date.now() };
    }
    /** The pages' script errors: each flow ends with none. */
    const problems: string[] = [];
    const created = async (p: Page) => {
      await p
        .locator("#result[data-state=created]")
        .waitFor({ timeout: 30_000 })
        .catch(async (err: Error) => {
          throw new Error(`${err.message}\nThe page shows: ${await p.content()}`);
        });
      expect(problems).toEqual([]);
    };

    describe(SUITE, () => {
      it("installs without a peer dependency conflict", () => {
        expect(installed.installLog).not.toMatch(/ERESOLVE|peer dep/i);
      });

      it("a person-paced browser signs up through the plain form: its page's evidence goes with the post, allowed at once (201); feedback on the account reaches Warden", async () => {
        const { p, loadedAt } = await open();
        const sent = p.waitForRequest((r) => r.url().endsWith("/signup") && r.method() === "POST");
        await fillLikeAPerson(
          p,
          { "input[name=email]": "ann@example.org", "input[name=name]": "Ann" },
          "button",
          loadedAt,
        );
        const post = await sent;
        expect(post.headers()["content-type"]).toMatch(/^application\/x-www-form-urlencoded/);
        const fields = new URLSearchParams(post.postData() ?? "");
        expect(JSON.parse(fields.get("wardenPage") ?? "{}")).toMatchObject({
          token: expect.stringMatching(/^wpt1\./),
        });
        expect((await post.response())?.status()).toBe(201);
        await created(p);
        const [item] = await warden.store.insights.listEvents("shop", { since: 0, until: Date.now() + 1 }, 1);
        const event = await warden.store.events.get("shop", item?.id as string);
        expect(event).toMatchObject({ decision: "allow", actorType: "human" });
        expect(event?.signals.page).toMatchObject({ ageMs: expect.any(Number) });

        const feedback = await fetch(`${url}/admin/accounts/ann@example.org/abuse`, {
          method: "POST",
          headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        });
        expect(await feedback.json()).toEqual({ ok: true, eventId: event?.id });
        await p.context().close();
      }, 60_000);

      it("the same form posted by a program without its page: refused (JSON for a script), no account", async () => {
        const res = await fetch(`${url}/signup`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded", "user-agent": PERSON_UA },
          body: "email=bot%40example.org&name=Bot",
        });
        // Denied or challenged (its network is over the tenant's limit too); never created.
        expect([403, 428]).toContain(res.status);
        expect(await res.json()).toMatchObject({
          code: res.status === 403 ? "warden_denied" : "warden_challenge",
        });
        const [item] = await warden.store.insights.listEvents("shop", { since: 0, until: Date.now() + 1 }, 1);
        expect(await warden.store.events.get("shop", item?.id as string)).toMatchObject({
          signals: { page: "absent" },
        });
        const feedback = await fetch(`${url}/admin/accounts/bot@example.org/abuse`, {
          method: "POST",
          headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        });
        expect(feedback.status).toBe(404);
      });

      it("challenged (the network over the tenant's sign-ups per hour): the gate's page runs the widget by itself and posts the form back; created after the re-verify, cleared", async () => {
        const { apiKey } = await warden.key("shop");
        for (let i = 0; i < 4; i++) {
          const res = await warden.app.inject({
            method: "POST",
            url: "/v1/verify",
            headers: bearer(apiKey),
            payload: { action: "signup", session: `earlier-${i}`, subject: { ipTrunc: LOOPBACK } },
          });
          expect(res.statusCode).toBe(200);
        }
        const { p, loadedAt } = await open();
        const challenged = p.waitForResponse((r) => r.url().endsWith("/signup") && r.status() === 428);
        await fillLikeAPerson(
          p,
          { "input[name=email]": "bob@example.org", "input[name=name]": "Bob" },
          "button",
          loadedAt,
        );
        expect((await challenged).headers()["content-type"]).toMatch(/^text\/html/);
        await created(p);
        const [item] = await warden.store.insights.listEvents("shop", { since: 0, until: Date.now() + 1 }, 1);
        const event = await warden.store.events.get("shop", item?.id as string);
        expect(event).toMatchObject({ decision: "allow" });
        expect(event?.reasonCodes).toContain("challenge_cleared");
        await p.context().close();
      }, 90_000);
    });
  }
}
