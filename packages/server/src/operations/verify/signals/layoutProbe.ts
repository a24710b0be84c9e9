import { createHash } from "node:crypto";

/**
 * The layout probe of a page token: a few boxes laid out by CSS rules (flex, grid, percentages,
 * calc(), absolute insets, transforms) whose sizes the page's script measures and sends back with
 * the form (subject.page.environment.probe). Each box's size follows from whole-pixel rules, so the
 * answer is exact in every layout engine; a client that fetched the page and its token without a
 * browser engine has no layout to measure and must compute the rules itself.
 *
 * The probe is derived from a seed keyed by the page-token key (tokens/pageToken.ts probeSeed), so
 * verify recomputes the expected answer without storing anything, and a client cannot compute it
 * from the token: it has the boxes' CSS, and must lay them out. It raises the cost of a client
 * without a browser engine (it must implement these CSS rules, or run a browser); it proves no
 * person (docs/security-model.md).
 */

/** One CSS declaration, applied with style.setProperty by the page. */
export type Declaration = readonly [property: string, value: string];

/** A box and its children: the page measures each child's bounding rectangle (width, height). */
export interface ProbeBox {
  readonly style: readonly Declaration[];
  readonly children: readonly (readonly Declaration[])[];
}

export interface LayoutProbe {
  readonly boxes: readonly ProbeBox[];
  /** Width and height of every child, box by box, rounded to whole pixels. */
  readonly expected: readonly number[];
}

/** The most numbers an answer holds (the schema's cap). */
export const MAX_PROBE_ANSWER = 64;
/** How far a measured size may be from the expected one, in CSS pixels (page zoom snaps to device pixels). */
const TOLERANCE_PX = 1;
const BOXES = 5;

/** A small deterministic generator (mulberry32) seeded from the nonce's hash. */
function generator(seed: string): (min: number, max: number) => number {
  let state = createHash("sha256").update(`warden-layout-probe:${seed}`).digest().readUInt32BE(0);
  return (min, max) => {
    state = (state + 0x6d2b79f5) | 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const unit = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    return min + Math.floor(unit * (max - min + 1));
  };
}

type Pick = (min: number, max: number) => number;
type Family = (pick: Pick) => { box: ProbeBox; expected: number[] };

const px = (n: number) => `${n}px`;

/** Flex items growing from their basis by their share of the free space. */
const flex: Family = (pick) => {
  const grows = [pick(1, 3), pick(1, 3), pick(1, 3)];
  const bases = grows.map(() => pick(10, 60));
  const margins = grows.map(() => pick(0, 9));
  const unit = pick(5, 40);
  const total = grows.reduce((a, b) => a + b, 0);
  const width = bases.reduce((a, b) => a + b, 0) + margins.reduce((a, b) => a + b, 0) + unit * total;
  const heights = grows.map(() => pick(8, 40));
  return {
    box: {
      style: [
        ["display", "flex"],
        ["align-items", "flex-start"],
        ["width", px(width)],
      ],
      children: grows.map((g, i) => [
        ["flex-grow", String(g)],
        ["flex-shrink", "0"],
        ["flex-basis", px(bases[i] as number)],
        ["margin-left", px(margins[i] as number)],
        ["height", px(heights[i] as number)],
      ]),
    },
    expected: grows.flatMap((g, i) => [(bases[i] as number) + unit * g, heights[i] as number]),
  };
};

/** A grid of a fixed track and two fractions, with a gap. */
const grid: Family = (pick) => {
  const fixed = pick(10, 80);
  const gap = pick(0, 12);
  const fraction = pick(10, 60);
  const heights = [pick(8, 40), pick(8, 40), pick(8, 40)];
  return {
    box: {
      style: [
        ["display", "grid"],
        ["align-items", "start"],
        ["width", px(fixed + 2 * gap + 3 * fraction)],
        ["grid-template-columns", `${px(fixed)} 1fr 2fr`],
        ["column-gap", px(gap)],
      ],
      children: heights.map((h) => [["height", px(h)]]),
    },
    expected: [
      fixed,
      heights[0] as number,
      fraction,
      heights[1] as number,
      2 * fraction,
      heights[2] as number,
    ],
  };
};

/** Percentage widths with padding (content-box), and calc() mixing percentages and pixels. */
const percent: Family = (pick) => {
  const parent = 20 * pick(5, 30);
  const share = [10, 20, 25, 40, 50, 75, 80][pick(0, 6)] as number;
  const padding = pick(0, 12);
  const height = pick(8, 40);
  const quarter = [25, 50, 75][pick(0, 2)] as number;
  const less = pick(1, 20);
  const calcHeight = pick(8, 40);
  return {
    box: {
      style: [["width", px(parent)]],
      children: [
        [
          ["box-sizing", "content-box"],
          ["width", `${share}%`],
          ["padding", px(padding)],
          ["height", px(height)],
        ],
        [
          ["width", `calc(${quarter}% - ${px(less)})`],
          ["height", px(calcHeight)],
        ],
      ],
    },
    expected: [
      (parent * share) / 100 + 2 * padding,
      height + 2 * padding,
      (parent * quarter) / 100 - less,
      calcHeight,
    ],
  };
};

/** An absolutely positioned box sized by its four insets, and a scaled box. */
const insets: Family = (pick) => {
  const width = pick(60, 300);
  const height = pick(40, 200);
  const [left, right, top, bottom] = [pick(0, 25), pick(0, 25), pick(0, 15), pick(0, 15)];
  const scale = pick(2, 3);
  const w = pick(5, 30);
  const h = pick(5, 30);
  return {
    box: {
      style: [
        ["position", "relative"],
        ["width", px(width)],
        ["height", px(height)],
      ],
      children: [
        [
          ["position", "absolute"],
          ["left", px(left)],
          ["right", px(right)],
          ["top", px(top)],
          ["bottom", px(bottom)],
        ],
        [
          ["width", px(w)],
          ["height", px(h)],
          ["transform", `scale(${scale})`],
        ],
      ],
    },
    expected: [width - left - right, height - top - bottom, w * scale, h * scale],
  };
};

const FAMILIES: readonly Family[] = [flex, grid, percent, insets];

/** The probe of a seed: the same boxes and answer wherever it is computed. */
export function layoutProbe(seed: string): LayoutProbe {
  const pick = generator(seed);
  const boxes: ProbeBox[] = [];
  const expected: number[] = [];
  for (let i = 0; i < BOXES; i++) {
    const family = FAMILIES[pick(0, FAMILIES.length - 1)] as Family;
    const made = family(pick);
    boxes.push(made.box);
    expected.push(...made.expected);
  }
  return { boxes, expected };
}

/** Whether a page's answer measures the probe's boxes: every size within a pixel. */
export function probeAnswered(answer: unknown, expected: readonly number[]): boolean {
  if (!Array.isArray(answer) || answer.length !== expected.length) return false;
  return answer.every(
    (n, i) => typeof n === "number" && Math.abs(n - (expected[i] as number)) <= TOLERANCE_PX,
  );
}
