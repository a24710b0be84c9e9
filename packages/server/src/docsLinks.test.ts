import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import GithubSlugger from "github-slugger";
import { describe, expect, it } from "vitest";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const read = (file: string) => fs.readFileSync(path.join(root, file), "utf8");

/** Markdown files users read: the README and docs/. */
const markdown = [
  "README.md",
  "CHANGELOG.md",
  ...fs
    .readdirSync(path.join(root, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

/** The anchors GitHub makes for a file's headings (fenced code blocks' `#` lines are not headings). */
function anchorsOf(file: string): Set<string> {
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of read(file).split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    const heading = !fenced && /^#{1,6} (.+)$/.exec(line);
    if (heading) anchors.add(slugger.slug((heading[1] as string).replace(/`/g, "")));
  }
  return anchors;
}

/** Every source file of the packages and examples (not generated or built output). */
function sources(dir: string): string[] {
  return fs.readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory())
      return ["node_modules", "dist", "dist-testing", "generated"].includes(entry.name) ? [] : sources(rel);
    return /\.(ts|mjs|js)$/.test(entry.name) ? [rel] : [];
  });
}

describe("documentation links", () => {
  it("every local link in the README and docs names a file that exists and, with #, one of its headings", () => {
    const broken: string[] = [];
    for (const file of markdown) {
      for (const [, target] of read(file).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target as string)) continue; // http:, mailto:
        const [linked, anchor] = (target as string).split("#");
        const resolved = linked
          ? path.posix.normalize(path.posix.join(path.posix.dirname(file), linked))
          : file;
        if (!fs.existsSync(path.join(root, resolved))) broken.push(`${file}: ${target} (no file)`);
        else if (anchor && resolved.endsWith(".md") && !anchorsOf(resolved).has(anchor))
          broken.push(`${file}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("code comments cite docs/*.md anchors that exist", () => {
    const broken: string[] = [];
    for (const file of [...sources("packages"), ...sources("examples")]) {
      for (const [cited, doc, anchor] of read(file).matchAll(/docs\/([a-z-]+\.md)#([a-z0-9-]+)/g)) {
        if (
          !fs.existsSync(path.join(root, "docs", doc as string)) ||
          !anchorsOf(`docs/${doc}`).has(anchor as string)
        )
          broken.push(`${file}: ${cited}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("comments cite the repository's own docs, never a specification kept elsewhere", () => {
    const absent: string[] = [];
    for (const file of [...sources("packages"), ...sources("examples")]) {
      if (file.endsWith("docsLinks.test.ts")) continue;
      for (const [cited] of read(file).matchAll(
        /\(spec\b[^)]*\)|\bthe spec(?:'s|\s+(?:says|asks|leaves|allows))\b/gi,
      ))
        absent.push(`${file}: ${cited}`);
    }
    expect(absent).toEqual([]);
  });
});
