import { createHash } from "node:crypto";
import type { PageEnvironment } from "@warden/server/dist/operations/verify/signals/pageEnvironment.js";
import { FingerprintGenerator } from "fingerprint-generator";
import { browserJa4, browserProfiles, type Draws, iosProfiles, type Profile } from "./trafficGenerator.js";

/**
 * People's devices for the day of traffic (populationDay.ts): each person's device class (iPhone
 * Safari, Android Chrome, Windows Chrome, …) is drawn from CLASSES (their shares), then the device itself, within
 * its class, from `fingerprint-generator`'s Bayesian network of browser fingerprints collected from
 * real traffic (its screen, pixel ratio, colour depth, processor count, memory, touch points,
 * navigator.platform and WebGL renderer), with the shares of that traffic. The person's request is
 * the eval's browser profile of the class (trafficGenerator.ts: user agent, headers and TLS stack, the
 * same the rest of the eval's people send), and the page reports what @warden/browser's watchPage
 * reads (subject.page.environment):
 * - the device's facts as fingerprint-generator drew them; deviceMemory only where the browser exposes
 *   it (Chromium), none from Safari and Firefox;
 * - the time zone and languages of the person's market (MARKETS);
 * - a canvas hash that follows the rendering stack, not the person: the same drawing gives the same
 *   pixels on one GPU, platform and browser engine build, so everyone on one device model and browser
 *   build shares it (every iOS browser is WebKit, so Safari and Chrome on one iPhone and iOS agree;
 *   Chrome and Edge of one build on one machine agree). That is what makes a popular phone one digest
 *   across thousands of people, the case the campaign rule must not mistake for a campaign;
 * - canvasNoise for Safari's Private Browsing (it adds noise to canvas read-backs), PRIVATE_SAFARI of
 *   Safari's people.
 * The class mix, the markets and the private-browsing share are assumptions of the model, not
 * measurements; the devices within a class are fingerprint-generator's.
 */

export const DEVICE_CLASSES = [
  "iPhone Safari",
  "iPhone Chrome",
  "Android Chrome",
  "Windows Chrome",
  "Windows Edge",
  "Windows Firefox",
  "macOS Safari",
  "macOS Chrome",
  "Linux Firefox",
] as const;
export type DeviceClass = (typeof DEVICE_CLASSES)[number];

interface ClassModel {
  /** Share of the tenant's people on this class. */
  share: number;
  /** The user agents of fingerprint-generator's network that are this class's devices. */
  fingerprints: RegExp;
  /** The eval's browser profile of the class, in the person's language. */
  profile: (lang: string) => Profile;
  /** The browser engine build that draws the canvas (with the GPU and platform, its pixels). */
  engine: string;
  /** navigator.deviceMemory is a Chromium API. */
  memory: boolean;
  /** Safari, whose Private Browsing adds noise to canvas read-backs. */
  safari: boolean;
  touch: boolean;
}

const profile = (i: number) => (lang: string) => browserProfiles(lang)[i] as Profile;
/** Safari on iOS as the eval's profiles name it (iOS 18.1), and Chrome on iOS (WebKit underneath). */
const IOS_ENGINE = "WebKit (iOS 18.1)";

/**
 * A consumer site's class mix (phones a little over half the signups: iPhones ahead in the tenant's
 * market, Chrome ahead on the desktop), an assumption. The regular expressions pick the network's
 * user agents of each class (not its other browsers: Opera, Samsung Internet, in-app views, …).
 */
const CLASSES: Record<DeviceClass, ClassModel> = {
  "iPhone Safari": {
    share: 0.26,
    fingerprints:
      /^Mozilla\/5\.0 \(iPhone; CPU iPhone OS [\d_]+ like Mac OS X\).* Version\/[\d.]+ Mobile\/\w+ Safari\/[\d.]+$/,
    profile: profile(7),
    engine: IOS_ENGINE,
    memory: false,
    safari: true,
    touch: true,
  },
  "iPhone Chrome": {
    share: 0.04,
    // Chrome on iOS is WebKit on the same iPhones: the device is drawn as Safari's.
    fingerprints:
      /^Mozilla\/5\.0 \(iPhone; CPU iPhone OS [\d_]+ like Mac OS X\).* Version\/[\d.]+ Mobile\/\w+ Safari\/[\d.]+$/,
    profile: (lang) => iosProfiles(lang)[0] as Profile,
    engine: IOS_ENGINE,
    memory: false,
    safari: false,
    touch: true,
  },
  "Android Chrome": {
    share: 0.25,
    fingerprints:
      /^Mozilla\/5\.0 \(Linux; Android [\d.]+; K\) AppleWebKit\/[\d.]+ \(KHTML, like Gecko\) Chrome\/[\d.]+ Mobile Safari\/[\d.]+$/,
    profile: profile(2),
    engine: "Chrome 156 (Android)",
    memory: true,
    safari: false,
    touch: true,
  },
  "Windows Chrome": {
    share: 0.21,
    fingerprints:
      /^Mozilla\/5\.0 \(Windows NT 10\.0; Win64; x64\) AppleWebKit\/[\d.]+ \(KHTML, like Gecko\) Chrome\/[\d.]+ Safari\/[\d.]+$/,
    profile: profile(0),
    engine: "Chrome 156 (Windows)",
    memory: true,
    safari: false,
    touch: false,
  },
  "Windows Edge": {
    share: 0.06,
    fingerprints:
      /^Mozilla\/5\.0 \(Windows NT 10\.0; Win64; x64\).* Chrome\/[\d.]+ Safari\/[\d.]+ Edg\/[\d.]+$/,
    profile: profile(3),
    // Edge 156 is Chromium 156: the same drawing as Chrome's on one machine.
    engine: "Chrome 156 (Windows)",
    memory: true,
    safari: false,
    touch: false,
  },
  "Windows Firefox": {
    share: 0.025,
    fingerprints:
      /^Mozilla\/5\.0 \(Windows NT 10\.0; Win64; x64; rv:[\d.]+\) Gecko\/20100101 Firefox\/[\d.]+$/,
    profile: profile(4),
    engine: "Firefox 133 (Windows)",
    memory: false,
    safari: false,
    touch: false,
  },
  "macOS Safari": {
    share: 0.055,
    fingerprints: /^Mozilla\/5\.0 \(Macintosh; Intel Mac OS X [\d_]+\).* Version\/[\d.]+ Safari\/[\d.]+$/,
    profile: profile(6),
    engine: "WebKit (Safari 17.6, macOS)",
    memory: false,
    safari: true,
    touch: false,
  },
  "macOS Chrome": {
    share: 0.085,
    fingerprints:
      /^Mozilla\/5\.0 \(Macintosh; Intel Mac OS X [\d_]+\) AppleWebKit\/[\d.]+ \(KHTML, like Gecko\) Chrome\/[\d.]+ Safari\/[\d.]+$/,
    profile: profile(1),
    engine: "Chrome 155 (macOS)",
    memory: true,
    safari: false,
    touch: false,
  },
  "Linux Firefox": {
    share: 0.015,
    fingerprints:
      /^Mozilla\/5\.0 \(X11; (Ubuntu; )?Linux x86_64; rv:[\d.]+\) Gecko\/20100101 Firefox\/[\d.]+$/,
    profile: profile(5),
    engine: "Firefox 132 (Linux)",
    memory: false,
    safari: false,
    touch: false,
  },
};

/** Share of Safari's people in Private Browsing (canvas read-backs with noise). */
const PRIVATE_SAFARI = 0.08;

/** Where the tenant's people are: its own country's language and time zone for most, a few abroad. */
interface Market {
  share: number;
  /** Accept-Language as the browser sends it. */
  acceptLanguage: string;
  /** navigator.languages, comma-separated as watchPage sends it. */
  languages: string;
  /** IANA time zones, with their shares of the market's people. */
  timezones: readonly (readonly [string, number])[];
}

/**
 * The eval's tenant is a site in one country (the United Kingdom): one language and one time zone for
 * 85% of its people, the hardest case for the campaign rule (a phone model is then one digest for a
 * large share of the day), and 15% from abroad. An assumption of the model.
 */
export const MARKETS: readonly Market[] = [
  {
    share: 0.85,
    acceptLanguage: "en-GB,en;q=0.9",
    languages: "en-GB,en",
    timezones: [["Europe/London", 1]],
  },
  {
    share: 0.06,
    acceptLanguage: "en-US,en;q=0.9",
    languages: "en-US,en",
    timezones: [
      ["America/New_York", 0.47],
      ["America/Chicago", 0.29],
      ["America/Denver", 0.07],
      ["America/Los_Angeles", 0.17],
    ],
  },
  {
    share: 0.04,
    acceptLanguage: "de-DE,de;q=0.9,en;q=0.7",
    languages: "de-DE,de,en",
    timezones: [["Europe/Berlin", 1]],
  },
  {
    share: 0.03,
    acceptLanguage: "fr-FR,fr;q=0.9",
    languages: "fr-FR,fr",
    timezones: [["Europe/Paris", 1]],
  },
  {
    share: 0.02,
    acceptLanguage: "es-ES,es;q=0.9",
    languages: "es-ES,es",
    timezones: [["Europe/Madrid", 1]],
  },
];

/** A person's device, browser and market, as their page and request show them. */
export interface Device {
  cls: DeviceClass;
  /** The eval's profile of the class in the person's language: user agent and headers. */
  profile: Profile;
  /** The handshake of the class's browser (Chromium's, Firefox's, Apple's). */
  ja4: string;
  touch: boolean;
  /** What watchPage reports, without the probe's measurements (those depend on the page token). */
  environment: PageEnvironment;
}

/** A fingerprint of the network: its attributes by name (see fingerprint-generator's own unpacking). */
type Sample = Record<string, unknown>;
interface Network {
  nodesByName: Record<string, { possibleValues: string[] }>;
  generateConsistentSampleWhenPossible(values: Record<string, string[]>): Record<string, string>;
}

const STRINGIFIED = "*STRINGIFIED*";
const MISSING = "*MISSING_VALUE*";

function unpack(raw: Record<string, string>): Sample {
  const out: Sample = {};
  for (const [k, v] of Object.entries(raw)) {
    out[k] =
      v === MISSING ? undefined : v.startsWith(STRINGIFIED) ? JSON.parse(v.slice(STRINGIFIED.length)) : v;
  }
  return out;
}

/** Runs `f` with Math.random drawing from `rnd`: fingerprint-generator samples with Math.random. */
function seeded<T>(rnd: () => number, f: () => T): T {
  const saved = Math.random;
  Math.random = rnd;
  try {
    return f();
  } finally {
    Math.random = saved;
  }
}

const num = (v: unknown): number | undefined => {
  const n = typeof v === "number" ? v : Number.parseFloat(String(v));
  return Number.isFinite(n) ? n : undefined;
};

/**
 * Draws devices from fingerprint-generator's network. Loading the network takes about a second, so one
 * population serves a whole run. Deterministic for the draws it is given.
 */
export class DevicePopulation {
  private readonly network: Network;
  private readonly agents = new Map<DeviceClass, string[]>();

  constructor() {
    // The network is what the package samples from; its field is public (typed `any` by the package).
    this.network = new FingerprintGenerator().fingerprintGeneratorNetwork as Network;
    const all = this.network.nodesByName.userAgent?.possibleValues ?? [];
    for (const cls of DEVICE_CLASSES) {
      const mine = all.filter((ua) => CLASSES[cls].fingerprints.test(ua));
      if (mine.length === 0) throw new Error(`fingerprint-generator has no devices of class ${cls}`);
      this.agents.set(cls, mine);
    }
  }

  /** A person's device: class by CLASSES' shares, device by the network, market by MARKETS. */
  draw(d: Draws, cls: DeviceClass = drawClass(d)): Device {
    const model = CLASSES[cls];
    const market = weighted(d, MARKETS, (m) => m.share);
    const timezone = weighted(d, market.timezones, (t) => t[1])[0];
    const agents = this.agents.get(cls) as string[];
    let sample: Sample = {};
    // The network sometimes answers a sample without a screen (fingerprint-generator retries too).
    for (let tries = 0; tries < 10 && sample.screen === undefined; tries++) {
      sample = unpack(
        seeded(d.rnd, () => this.network.generateConsistentSampleWhenPossible({ userAgent: agents })),
      );
    }
    const screen = (sample.screen ?? {}) as Record<string, unknown>;
    const card = (sample.videoCard ?? {}) as Record<string, unknown>;
    const renderer = typeof card.renderer === "string" ? card.renderer : undefined;
    const platform = typeof sample.platform === "string" ? sample.platform : undefined;
    const width = num(screen.width);
    const height = num(screen.height);
    const ratio = num(screen.devicePixelRatio);
    const cores = num(sample.hardwareConcurrency);
    const memory = model.memory ? num(sample.deviceMemory) : undefined;
    const touchPoints = num(sample.maxTouchPoints) ?? 0;
    const colorDepth = num(screen.colorDepth);
    const noise = model.safari && d.rnd() < PRIVATE_SAFARI;
    const environment: PageEnvironment = {
      ...(width !== undefined && height !== undefined ? { screen: `${width}x${height}` } : {}),
      ...(colorDepth !== undefined ? { colorDepth } : {}),
      ...(ratio !== undefined ? { pixelRatio: Math.round(ratio * 100) / 100 } : {}),
      ...(cores !== undefined ? { cores } : {}),
      ...(memory !== undefined ? { memory } : {}),
      touchPoints,
      timezone,
      languages: market.languages,
      ...(platform !== undefined ? { platform } : {}),
      ...(renderer !== undefined ? { renderer } : {}),
      canvas: canvasHash(model.engine, renderer, platform),
      canvasNoise: noise,
    };
    const p = model.profile(market.acceptLanguage);
    return { cls, profile: p, ja4: browserJa4(p.ua), touch: model.touch, environment };
  }
}

/** The hash of watchPage's fixed drawing on one rendering stack (browser engine build, GPU, platform). */
function canvasHash(engine: string, renderer: string | undefined, platform: string | undefined): string {
  return createHash("sha256")
    .update(`${engine}\n${renderer ?? ""}\n${platform ?? ""}`)
    .digest("hex")
    .slice(0, 14);
}

function weighted<T>(d: Draws, xs: readonly T[], weight: (x: T) => number): T {
  const total = xs.reduce((s, x) => s + weight(x), 0);
  let r = d.rnd() * total;
  for (const x of xs) {
    r -= weight(x);
    if (r < 0) return x;
  }
  return xs[xs.length - 1] as T;
}

/** A class by the mix. */
export function drawClass(d: Draws): DeviceClass {
  return weighted(d, DEVICE_CLASSES, (c) => CLASSES[c].share);
}
