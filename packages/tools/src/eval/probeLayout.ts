import type { ProbeBox } from "@warden/server/dist/operations/verify/signals/layoutProbe.js";

/**
 * What a modelled person's browser measures of a page token's layout probe: the sizes a layout
 * engine gives the boxes POST /v1/page-tokens handed out (layoutProbe.browser.test.ts checks that
 * Chromium gives Warden's). A MODEL of a browser's layout for the eval's people, covering only the
 * CSS the probe uses (flex growth, a grid of a fixed track and two fractions, percentages with
 * padding, calc(), absolute insets, scale()); the real-tools benchmark's modelled people use it too
 * (examples/realtools/lib/pageEvidence.mjs). It reads the boxes as a page would, never the probe's seed.
 */
export function layOut(boxes: readonly ProbeBox[]): number[] {
  const px = (v: string | undefined) => Number.parseFloat(v ?? "0") || 0;
  const sizes: number[] = [];
  for (const box of boxes) {
    const parent: Record<string, string> = Object.fromEntries(box.style);
    const children: Record<string, string>[] = box.children.map((c) => Object.fromEntries(c));
    const width = px(parent.width);
    if (parent.display === "flex") {
      const grows = children.map((c) => Number(c["flex-grow"] ?? 0));
      const used = children.reduce((sum, c) => sum + px(c["flex-basis"]) + px(c["margin-left"]), 0);
      const unit = (width - used) / grows.reduce((a, b) => a + b, 0);
      children.forEach((c, i) => {
        sizes.push(px(c["flex-basis"]) + unit * (grows[i] ?? 0), px(c.height));
      });
    } else if (parent.display === "grid") {
      const fixed = px(parent["grid-template-columns"]);
      const fraction = (width - fixed - 2 * px(parent["column-gap"])) / 3;
      [fixed, fraction, 2 * fraction].forEach((w, i) => {
        sizes.push(w, px(children[i]?.height));
      });
    } else if (parent.position === "relative") {
      const height = px(parent.height);
      for (const c of children) {
        if (c.position === "absolute") {
          sizes.push(width - px(c.left) - px(c.right), height - px(c.top) - px(c.bottom));
        } else {
          const scale = Number(/scale\(([\d.]+)\)/.exec(c.transform ?? "")?.[1] ?? 1);
          sizes.push(px(c.width) * scale, px(c.height) * scale);
        }
      }
    } else {
      for (const c of children) {
        const calc = /calc\(([\d.]+)% - ([\d.]+)px\)/.exec(c.width ?? "");
        if (calc) sizes.push((width * Number(calc[1])) / 100 - Number(calc[2]), px(c.height));
        else {
          const padding = px(c.padding);
          sizes.push((width * px(c.width)) / 100 + 2 * padding, px(c.height) + 2 * padding);
        }
      }
    }
  }
  return sizes.map(Math.round);
}
