import { SCOPE_FIELDS, type ScopeField } from "./generated/scopeFields.js";

export type { ScopeField };

/**
 * What one JavaScript scope of a page (the page itself, or a worker it started) reads of its own
 * browser. In a real browser both scopes read the same values: they come from the same browser
 * process. Stealth automation rewrites them by script injected into the page (Playwright's
 * addInitScript, Puppeteer's evaluateOnNewDocument), which never runs in a worker, so the page and
 * its worker disagree (measured with puppeteer-extra-plugin-stealth in Chromium: platform,
 * hardwareConcurrency and the WebGL renderer; docs/browser-headers.md). Its fields are the ones
 * Warden's verify knows (SCOPE_FIELDS, generated from the server's list).
 */
export interface ScopeView extends Record<ScopeField, string | number | null> {
  userAgent: string | null;
  platform: string | null;
  hardwareConcurrency: number | null;
  languages: string | null;
  /** navigator.userAgentData's brands, mobile and platform (Chromium only). */
  userAgentData: string | null;
  /** The WebGL vendor and renderer (unmasked where the browser allows). */
  webgl: string | null;
}

interface NavigatorView {
  userAgent?: string;
  platform?: string;
  hardwareConcurrency?: number;
  languages?: readonly string[];
  userAgentData?: { brands?: { brand: string; version: string }[]; mobile?: boolean; platform?: string };
}

type AnyCanvas = { getContext(kind: "webgl"): unknown };

const DEBUG_RENDERER_INFO = "WEBGL_debug_renderer_info";

/** The WebGL vendor and renderer of a fresh 1×1 context, released at once; null without WebGL. */
function webglOf(makeCanvas: () => AnyCanvas | undefined): string | null {
  try {
    const gl = makeCanvas()?.getContext("webgl") as WebGLRenderingContext | null | undefined;
    if (!gl) return null;
    const info = gl.getExtension(DEBUG_RENDERER_INFO) as {
      UNMASKED_VENDOR_WEBGL: number;
      UNMASKED_RENDERER_WEBGL: number;
    } | null;
    const vendor = gl.getParameter(info ? info.UNMASKED_VENDOR_WEBGL : gl.VENDOR);
    const renderer = gl.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : gl.RENDERER);
    gl.getExtension("WEBGL_lose_context")?.loseContext();
    return `${String(vendor)} | ${String(renderer)}`;
  } catch {
    return null;
  }
}

const text = (v: unknown): string | null => (typeof v === "string" ? v : null);

export function readScope(nav: NavigatorView, makeCanvas: () => AnyCanvas | undefined): ScopeView {
  const uaData = nav.userAgentData;
  return {
    userAgent: text(nav.userAgent),
    platform: text(nav.platform),
    hardwareConcurrency: typeof nav.hardwareConcurrency === "number" ? nav.hardwareConcurrency : null,
    languages: Array.isArray(nav.languages) ? nav.languages.join(",") : null,
    userAgentData: uaData
      ? JSON.stringify([
          (uaData.brands ?? []).map((b) => `${b.brand};${b.version}`),
          uaData.mobile ?? null,
          uaData.platform ?? null,
        ])
      : null,
    webgl: webglOf(makeCanvas),
  };
}

/** The fields both scopes could read and read differently. */
export function scopeMismatch(page: ScopeView, worker: ScopeView): ScopeField[] {
  return SCOPE_FIELDS.filter((f) => page[f] !== null && worker[f] !== null && page[f] !== worker[f]);
}
