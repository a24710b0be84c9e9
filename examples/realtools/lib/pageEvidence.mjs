// MODEL, kept in one place on purpose: what examples/signup's page adds to the signup body, for the
// clients that do not run the page (HTTP bots forging it, and the modelled people's header sets).
// The page (public/signup.js) sends, as of this writing:
// - wardenSignals: @warden/browser collectSignals() = { webdriver, mismatch?, workerHeadless? };
// - wardenPage: watchPage().report() = { token, behaviour, environment }: a page token its script
//   asked for at load (POST /warden/challenge/page, bound to the client's network and user agent,
//   with a layout probe), counts of trusted events between load and submit (keys, inserted, pasted,
//   autofilled, pointerMoves, clicks, touches, untrusted; elapsedMs), and the page's environment
//   (the probe's measured sizes, screen, hardware, time zone, languages, GPU, a canvas hash).
// When the page protocol changes, change this module, or pass another one with `--page-model <file>`
// exporting the same two functions.

// What a person's browser measures of the token's layout probe: the eval's model of a layout engine
// (the bots here replay what a real page sent; one that ports this arithmetic passes the probe,
// docs/security-model.md).
import { layOut } from "../../../packages/tools/dist/eval/probeLayout.js";
import { sleep } from "./time.mjs";
import { between } from "./xdotool.mjs";

/**
 * @typedef {{
 *   send: import("./httpFlow.mjs").Send,
 *   identity: { email: string, name: string },
 *   pageHtml: string,
 *   device?: "desktop" | "touch",
 *   personBehaviours?: Record<string, number>[],
 * }} PageContext
 *   personBehaviours: the counts the pages of this run's real people sent (lib/run.mjs), newest last.
 */

/** The page token, asked for as the page's script does at load; undefined when the route refuses. */
async function pageToken(send) {
  return (await issuedToken(send)).token;
}

/** The page token and the layout probe's boxes handed out with it, as the page's script receives them. */
async function issuedToken(send) {
  const answer = await send({ method: "POST", path: "/warden/challenge/page", body: {}, kind: "fetch" });
  const token = typeof answer.json?.pageToken === "string" ? answer.json.pageToken : undefined;
  return { token, boxes: Array.isArray(answer.json?.probe?.boxes) ? answer.json.probe.boxes : undefined };
}

/**
 * The graphics processors a person's browser shows, by platform: an iPhone's is Apple's, an Android
 * phone's Qualcomm's or Arm's, a Windows PC's is named through Direct3D, a Linux one's through OpenGL.
 */
const RENDERERS = {
  ios: () => "Apple GPU",
  android: () => ["Adreno (TM) 740", "Mali-G710", "Adreno (TM) 650"][between(0, 2)],
  windows: () =>
    [
      `ANGLE (Intel, Intel(R) UHD Graphics ${between(600, 770)} Direct3D11 vs_5_0 ps_5_0, D3D11)`,
      "ANGLE (NVIDIA, NVIDIA GeForce RTX 3060 Direct3D11 vs_5_0 ps_5_0, D3D11)",
      "ANGLE (AMD, AMD Radeon(TM) Graphics Direct3D11 vs_5_0 ps_5_0, D3D11)",
    ][between(0, 2)],
  linux: () => `ANGLE (Intel, Mesa Intel(R) UHD Graphics ${between(600, 770)}, OpenGL 4.6)`,
};
const PLATFORMS = { ios: "iPhone", android: "Linux armv81", windows: "Win32", linux: "Linux x86_64" };

/**
 * A person's device as its page reports it: one per person (their own screen, GPU and canvas), the
 * GPU and platform their operating system shows.
 * @param {"desktop" | "touch"} device
 * @param {"ios" | "android" | "windows" | "linux"} os
 */
function personEnvironment(device, os) {
  const hex = () => between(0, 2 ** 31).toString(16);
  if (device === "touch") {
    const [w, h] = [
      [390, 844],
      [393, 852],
      [412, 915],
      [360, 800],
    ][between(0, 3)];
    return {
      screen: `${w}x${h}`,
      colorDepth: 24,
      pixelRatio: 3,
      cores: [6, 8][between(0, 1)],
      touchPoints: 5,
      timezone: ["America/New_York", "Europe/London", "Europe/Berlin"][between(0, 2)],
      languages: "en-US,en",
      platform: PLATFORMS[os],
      renderer: RENDERERS[os](),
      canvas: hex(),
      canvasNoise: false,
    };
  }
  const [w, h] = [
    [1920, 1080],
    [1536, 864],
    [2560, 1440],
    [1440, 900],
  ][between(0, 3)];
  return {
    screen: `${w}x${h}`,
    colorDepth: 24,
    pixelRatio: [1, 1.25, 2][between(0, 2)],
    cores: [4, 8, 12, 16][between(0, 3)],
    memory: 8,
    touchPoints: 0,
    timezone: ["America/Chicago", "Europe/Paris", "Europe/Madrid"][between(0, 2)],
    languages: "en-US,en",
    platform: PLATFORMS[os],
    renderer: RENDERERS[os](),
    canvas: hex(),
    canvasNoise: false,
  };
}

/** Keys a person presses to type the form: every character, a Tab between the fields, a few fixes. */
const keysFor = (identity) => identity.email.length + identity.name.length + 1 + between(0, 4);

/**
 * What a person's browser running the page sends along with the form. On a desktop: key presses for
 * every character, pointer moves and two presses (into the first field, on Sign up); on a phone or
 * tablet: a virtual keyboard's key events and touches, no pointer. The person reads and fills the
 * form in for a few seconds (here 2 to 3.5 s: only the time from the token to the submit is
 * measured by Warden, against 1.5 s).
 * @param {PageContext} page
 * @returns {Promise<Record<string, unknown>>}
 */
export async function personPageFields({
  send,
  identity,
  device = "desktop",
  os = device === "touch" ? "android" : "linux",
}) {
  const started = Date.now();
  const { token, boxes } = await issuedToken(send);
  await sleep(between(2000, 3500));
  const touch = device === "touch";
  const behaviour = {
    elapsedMs: Date.now() - started + between(150, 400),
    keys: keysFor(identity),
    inserted: 0,
    pasted: 0,
    autofilled: 0,
    pointerMoves: touch ? 0 : between(40, 160),
    clicks: touch ? 0 : 2,
    touches: touch ? between(3, 5) : 0,
    untrusted: 0,
  };
  const environment = {
    ...personEnvironment(device, os),
    ...(boxes === undefined ? {} : { probe: layOut(boxes) }),
  };
  return {
    wardenSignals: { webdriver: false },
    wardenPage: token === undefined ? { behaviour, environment } : { token, behaviour, environment },
  };
}

/**
 * What a bot that never runs the page forges from it, having read its public script: the page token
 * asked for the same way (through its own connection and headers), a wait just past what a person
 * needs at the least, and the counts a person's desktop browser would report.
 * @param {PageContext} page
 * @returns {Promise<Record<string, unknown>>}
 */
export async function forgedPageFields({ send, identity }) {
  const started = Date.now();
  const token = await pageToken(send);
  await sleep(between(1700, 2500));
  const behaviour = {
    elapsedMs: Date.now() - started + between(100, 300),
    keys: keysFor(identity),
    inserted: 0,
    pasted: 0,
    autofilled: 0,
    pointerMoves: between(30, 90),
    clicks: 2,
    touches: 0,
    untrusted: 0,
  };
  return {
    wardenSignals: { webdriver: false },
    wardenPage: token === undefined ? { behaviour } : { token, behaviour },
  };
}

/** The page's scripts, fetched after the page as its <script type="module"> tags ask for them. */
const PAGE_SCRIPTS = ["/warden/warden.js", "/signup.js"];

/**
 * What a careful bot that never runs the page sends, having read its public script and a real
 * person's request: the page's scripts fetched after the page (as a browser loading it would), the page
 * token asked for as the script asks for it, a person's pace (3 to 8 s between the token and the
 * submit), and the counts a person's page sent in this run (one of `personBehaviours`, with keys for
 * this identity), or the desktop person's counts above when no person has run yet.
 * @param {PageContext} page
 * @returns {Promise<Record<string, unknown>>}
 */
export async function carefulPageFields({ send, identity, personBehaviours = [] }) {
  for (const path of PAGE_SCRIPTS) await send({ method: "GET", path, kind: "script" });
  const started = Date.now();
  const token = await pageToken(send);
  await sleep(between(3000, 8000));
  const seen =
    personBehaviours.length > 0 ? personBehaviours[between(0, personBehaviours.length - 1)] : undefined;
  const behaviour = {
    elapsedMs: Date.now() - started + between(150, 400),
    keys: keysFor(identity),
    inserted: seen?.inserted ?? 0,
    pasted: seen?.pasted ?? 0,
    autofilled: seen?.autofilled ?? 0,
    pointerMoves: seen?.pointerMoves ?? between(40, 160),
    clicks: seen?.clicks ?? 2,
    touches: seen?.touches ?? 0,
    untrusted: seen?.untrusted ?? 0,
  };
  return {
    wardenSignals: { webdriver: false },
    wardenPage: token === undefined ? { behaviour } : { token, behaviour },
  };
}

/** Loads another page model (a module exporting personPageFields and forgedPageFields). */
export async function loadPageModel(file) {
  if (!file) return { personPageFields, forgedPageFields };
  const { pathToFileURL } = await import("node:url");
  const path = await import("node:path");
  const mod = await import(pathToFileURL(path.resolve(file)).href);
  if (typeof mod.personPageFields !== "function" || typeof mod.forgedPageFields !== "function") {
    throw new Error(`${file} must export personPageFields and forgedPageFields`);
  }
  return { personPageFields: mod.personPageFields, forgedPageFields: mod.forgedPageFields };
}
