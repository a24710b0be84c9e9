// 10. PEOPLE, for real: Debian's Chromium started as a plain process (its own profile, no automation
// protocol, no --remote-debugging-*) on this run's people's Xvfb display, operated only through X input events
// (xdotool) at a person's pace. The browser is never asked anything: where to point comes from a
// calibration of the same window on the same page (lib/calibrate.mjs), and the outcome is read on the
// app's side (the recorded answers of /signup for this signup's address).
import { calibrate } from "../lib/calibrate.mjs";
import { launchPersonChromium } from "../lib/chromiumProcess.mjs";
import { sleep } from "../lib/time.mjs";
import { uaSwitcherArgs } from "../lib/uaSwitcher.mjs";
import { between, hands } from "../lib/xdotool.mjs";

/** A point a person would aim at inside a box: near the middle, never the exact centre twice. */
const aim = (box) => ({
  x: Math.round(box.x + box.w * (0.3 + Math.random() * 0.4)),
  y: Math.round(box.y + box.h * (0.35 + Math.random() * 0.3)),
});

/**
 * Each signup of a person class is another person, on a computer of their own. On this one machine
 * their browsers share the graphics, the canvas and the hardware; what a person's setting gives
 * them, their time zone and language, goes round these (the page reports both, so each person's
 * environment digest is their own, as on their own computer). Without it, ten signups of one
 * window from ten networks are what one machine's campaign is, and are refused as one.
 */
const PERSON_LOCALES = [
  { tz: "Europe/London", lang: "en-GB" },
  { tz: "Europe/Berlin", lang: "de-DE" },
  { tz: "America/New_York", lang: "en-US" },
  { tz: "Europe/Paris", lang: "fr-FR" },
  { tz: "Europe/Madrid", lang: "es-ES" },
  { tz: "America/Chicago", lang: "en-US" },
  { tz: "Europe/Amsterdam", lang: "nl-NL" },
  { tz: "Europe/Rome", lang: "it-IT" },
  { tz: "America/Los_Angeles", lang: "en-US" },
  { tz: "Europe/Warsaw", lang: "pl-PL" },
  { tz: "Europe/Dublin", lang: "en-IE" },
  { tz: "America/Toronto", lang: "en-CA" },
];

/** Waits until `test()` returns something truthy; resolves it, or undefined after timeoutMs. */
async function until(test, timeoutMs) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = test();
    if (value) return value;
    if (Date.now() > end) return undefined;
    await sleep(150);
  }
}

/**
 * @param {{ id: string, label: string, extraArgs?: (profile: string) => string[], typeUrl?: boolean }} o
 *   extraArgs: Chromium flags, given the fresh profile directory of each launch
 * @returns {import("./types.mjs").ClientClass}
 */
const person = ({ id, label, extraArgs = () => [], typeUrl = false }) => ({
  id,
  label,
  group: "people",
  needs: ["chromium", "display", "xdotool"],
  async start(ctx) {
    // The people's own display (lib/display.mjs, PERSON_SCREEN): their computer is not the bots'.
    const env = /** @type {NodeJS.ProcessEnv} */ (ctx.personDisplayEnv);
    const layout = await calibrate({
      env,
      tempRoot: ctx.tempRoot,
      appUrl: ctx.appUrl,
      extraArgs,
      typeUrl,
    });
    ctx.log(`${id} layout: ${JSON.stringify(layout)}`);
    const hand = hands(env);
    let people = 0;
    return {
      async signup(door, identity) {
        const locale = PERSON_LOCALES[people++ % PERSON_LOCALES.length];
        const personEnv = {
          ...env,
          TZ: locale.tz,
          LANG: `${locale.lang.replace("-", "_")}.UTF-8`,
          LANGUAGE: locale.lang,
        };
        const personArgs = (profile) => [...extraArgs(profile), `--lang=${locale.lang}`];
        const signupAnswers = () => ctx.answersFor(door.address).filter((a) => a.path === "/signup");
        const pageLoaded = () => door.paths.some((p) => p.startsWith("GET /signup.js"));
        // A page that does not come: type the address again, then close the browser and start over,
        // as a person would.
        let browser;
        for (let launch = 0; ; launch++) {
          browser = await launchPersonChromium({
            url: `${door.url}/`,
            env: personEnv,
            tempRoot: ctx.tempRoot,
            extraArgs: personArgs,
            typeUrl,
          });
          await hand.waitWindow(/** @type {number} */ (browser.pid));
          // The page is there once its script has loaded.
          let loaded = await until(pageLoaded, typeUrl ? 10_000 : 20_000);
          for (let attempt = 0; !loaded && typeUrl && attempt < 1; attempt++) {
            await browser.retype();
            loaded = await until(pageLoaded, 10_000);
          }
          if (loaded) break;
          const title = await browser.title();
          await browser.close();
          if (launch === 2) {
            throw new Error(`the page did not load in the person's Chromium (window: ${title})`);
          }
          ctx.log(`${id}: the page did not load (window: ${title}); starting the browser again`);
        }
        try {
          // A person reads the page for a moment.
          await sleep(between(1500, 3000));
          const email = aim(layout.email);
          await hand.moveTo(email.x, email.y);
          await sleep(between(100, 300));
          await hand.click();
          await sleep(between(300, 700));
          await hand.type(identity.email);
          await sleep(between(300, 800));
          await hand.key("Tab");
          await sleep(between(300, 700));
          await hand.type(identity.name);
          await sleep(between(400, 1000));
          const submit = aim(layout.submit);
          await hand.moveTo(submit.x, submit.y);
          await sleep(between(150, 400));
          await hand.click();
          await sleep(between(3000, 5000));
          let seen = 0;
          for (let round = 0; round < 4; round++) {
            const answer = await until(() => signupAnswers()[seen], 30_000);
            if (!answer) return "no answer";
            seen += 1;
            if (answer.status === 201) return "created";
            if (answer.status === 403) return "refused";
            if (answer.status === 428 && answer.code === "warden_challenge") {
              // The page shows the check and its Verify button: a person reads it, then presses it.
              await sleep(between(1200, 2500));
              const verify = aim(layout.verify);
              await hand.moveTo(verify.x, verify.y);
              await sleep(between(150, 400));
              await hand.click();
              // The element solves, completes and sends the form again by itself (a few seconds).
              await until(() => signupAnswers()[seen], 90_000);
              continue;
            }
            if (answer.status === 428) {
              // "Please try again in a few seconds": the person waits, then presses Sign up again.
              await sleep(between(5500, 7000));
              const again = aim(layout.submit);
              await hand.moveTo(again.x, again.y);
              await hand.click();
              continue;
            }
            return `answered ${answer.status}`;
          }
          return "gave up";
        } finally {
          await sleep(between(800, 1500));
          await browser.close();
        }
      },
      async close() {},
    };
  },
});

/** @type {import("./types.mjs").ClientClass[]} */
export const clients = [
  person({
    id: "person-chromium-xdotool",
    label: "Chromium window, a person's pace via xdotool (no automation)",
  }),
  // 11. The same person with a user-agent switcher extension (lib/uaSwitcher.mjs).
  person({
    id: "person-chromium-ua-switcher",
    label: "the same person + a user-agent switcher extension (Windows Chrome)",
    // A fresh copy of the extension in each profile: Chromium writes its indexed rules beside it.
    extraArgs: (profile) => uaSwitcherArgs(profile),
    typeUrl: true,
  }),
];
