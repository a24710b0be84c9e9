/**
 * What the page reads of the browser it runs in, sent with the form as `environment` (Warden's
 * subject.page.environment):
 * - `probe`: the sizes of the boxes of the page token's layout probe, laid out here and measured
 *   (only a page laid out by a browser engine has them);
 * - a few facts of the device and engine (screen, hardware, time zone, languages, graphics) and a
 *   hash of a fixed canvas drawing, which Warden hashes into a digest and counts across networks: many
 *   attempts from one setup share it. `canvasNoise` says the drawing read back differently twice (a
 *   privacy mode's or an anti-fingerprinting tool's noise): Warden then leaves the canvas out.
 * Nothing the person typed, and no identifier, is read.
 */

/** One CSS declaration of a probe box, as Warden sends it. */
type Declaration = [property: string, value: string];

export interface LayoutProbe {
  boxes: { style: Declaration[]; children: Declaration[][] }[];
}

export interface PageEnvironment {
  probe?: number[];
  screen?: string;
  colorDepth?: number;
  pixelRatio?: number;
  cores?: number;
  memory?: number;
  touchPoints?: number;
  timezone?: string;
  languages?: string;
  platform?: string;
  renderer?: string;
  canvas?: string;
  canvasNoise?: boolean;
}

const apply = (el: HTMLElement, declarations: readonly Declaration[]) => {
  for (const d of declarations) {
    if (Array.isArray(d) && typeof d[0] === "string" && typeof d[1] === "string")
      el.style.setProperty(d[0], d[1]);
  }
};

/**
 * Lays the probe's boxes out off screen (hidden, so nothing shows or moves) and measures each child's
 * bounding rectangle, width then height, rounded to whole pixels. Undefined without a document body.
 */
export function measureProbe(probe: LayoutProbe, doc: Document = document): number[] | undefined {
  if (!doc.body || !Array.isArray(probe?.boxes)) return undefined;
  const host = doc.createElement("div");
  apply(host, [
    ["position", "absolute"],
    ["left", "-20000px"],
    ["top", "0px"],
    ["visibility", "hidden"],
    ["pointer-events", "none"],
  ]);
  const measured: HTMLElement[] = [];
  for (const box of probe.boxes) {
    const parent = doc.createElement("div");
    apply(parent, box.style ?? []);
    for (const child of box.children ?? []) {
      const el = doc.createElement("div");
      apply(el, child);
      parent.appendChild(el);
      measured.push(el);
    }
    host.appendChild(parent);
  }
  doc.body.appendChild(host);
  try {
    return measured.flatMap((el) => {
      const r = el.getBoundingClientRect();
      return [Math.round(r.width), Math.round(r.height)];
    });
  } finally {
    host.remove();
  }
}

/** A 53-bit string hash (cyrb53), as hex: cheap, and no secure context needed. */
function hash(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16);
}

/** A fixed drawing's pixels, hashed, twice; and whether a known colour reads back as drawn. */
function canvasReading(doc: Document): { canvas?: string; canvasNoise?: boolean } {
  try {
    const draw = () => {
      const canvas = doc.createElement("canvas");
      canvas.width = 120;
      canvas.height = 40;
      const ctx = canvas.getContext("2d");
      if (!ctx) return undefined;
      ctx.fillStyle = "rgb(12, 34, 56)";
      ctx.fillRect(0, 0, 10, 10);
      ctx.fillStyle = "#f60";
      ctx.font = "15px Arial, sans-serif";
      ctx.textBaseline = "top";
      ctx.fillText("Warden ✓ 1.5", 12, 4);
      ctx.strokeStyle = "rgba(0, 90, 200, 0.7)";
      ctx.beginPath();
      ctx.arc(95, 20, 14, 0, Math.PI * 1.7);
      ctx.stroke();
      const pixels = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
      let text = "";
      for (let i = 0; i < pixels.length; i += 7) text += String.fromCharCode(pixels[i] as number);
      const known = [pixels[0], pixels[1], pixels[2], pixels[3]];
      return { digest: hash(text), known: known.join(",") === "12,34,56,255" };
    };
    const first = draw();
    const second = draw();
    if (!first || !second) return {};
    return { canvas: first.digest, canvasNoise: first.digest !== second.digest || !first.known };
  } catch {
    return {};
  }
}

function rendererOf(doc: Document): string | undefined {
  try {
    const gl = doc.createElement("canvas").getContext("webgl") as WebGLRenderingContext | null;
    if (!gl) return undefined;
    const info = gl.getExtension("WEBGL_debug_renderer_info");
    const name = info ? gl.getParameter(info.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER);
    return typeof name === "string" ? name.slice(0, 256) : undefined;
  } catch {
    return undefined;
  }
}

/** The environment as this page reads it, with the probe's measurements when a probe came. */
export function readEnvironment(probe: LayoutProbe | undefined, doc: Document = document): PageEnvironment {
  const env: PageEnvironment = {};
  if (probe) {
    const sizes = measureProbe(probe, doc);
    if (sizes) env.probe = sizes;
  }
  const nav = typeof navigator === "undefined" ? undefined : navigator;
  const scr = typeof screen === "undefined" ? undefined : screen;
  if (scr) {
    env.screen = `${scr.width}x${scr.height}`;
    env.colorDepth = scr.colorDepth;
  }
  if (typeof devicePixelRatio === "number") env.pixelRatio = Math.round(devicePixelRatio * 100) / 100;
  if (nav) {
    if (typeof nav.hardwareConcurrency === "number") env.cores = nav.hardwareConcurrency;
    const memory = (nav as { deviceMemory?: unknown }).deviceMemory;
    if (typeof memory === "number") env.memory = memory;
    if (typeof nav.maxTouchPoints === "number") env.touchPoints = nav.maxTouchPoints;
    env.languages = (nav.languages ?? []).join(",").slice(0, 256);
    if (typeof nav.platform === "string") env.platform = nav.platform.slice(0, 64);
  }
  try {
    env.timezone = Intl.DateTimeFormat().resolvedOptions().timeZone?.slice(0, 64);
  } catch {
    // no Intl time zone: left out
  }
  const renderer = rendererOf(doc);
  if (renderer) env.renderer = renderer;
  return { ...env, ...canvasReading(doc) };
}
