import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * docs/architecture.md opens with the repository's layout: a tree of paths, each with what it holds.
 * It is checked against the tree itself, both ways: every path it names exists, every module it names
 * in a description is where it says, and every directory and module of the server's source (and every
 * package and example) has a line.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const SRC = "packages/server/src";

interface Entry {
  /** The path from the repository's root. */
  path: string;
  /** Its description, continuation lines included. */
  text: string;
}

/** The layout block: the first fenced block after the "## Architecture" heading. */
function layout(): Entry[] {
  const doc = fs.readFileSync(path.join(root, "docs/architecture.md"), "utf8");
  const start = doc.indexOf("```", doc.indexOf("## Architecture"));
  const block = doc.slice(doc.indexOf("\n", start) + 1, doc.indexOf("```", start + 3));
  const entries: Entry[] = [];
  for (const line of block.split("\n")) {
    // A path starts at column 0 (from the root) or 2 (inside packages/server/src/); descriptions
    // continue at a deeper indent.
    const named = /^( {0,2})(\S+)(.*)$/.exec(line);
    if (named) {
      const [, indent, name, text] = named as unknown as [string, string, string, string];
      entries.push({ path: indent === "" ? name : `${SRC}/${name}`, text });
    } else if (line.trim() !== "") {
      const last = entries.at(-1);
      if (last) last.text += ` ${line.trim()}`;
    }
  }
  return entries;
}

const exists = (rel: string) => fs.existsSync(path.join(root, rel));

/** Every file under `dir` (relative to the root), by name. */
function filesUnder(dir: string): string[] {
  const full = path.join(root, dir);
  if (!fs.statSync(full).isDirectory()) return [path.basename(dir)];
  return fs.readdirSync(full, { withFileTypes: true }).flatMap((e) => {
    if (["node_modules", "dist", "dist-testing"].includes(e.name)) return [];
    return e.isDirectory() ? filesUnder(`${dir}/${e.name}`) : [e.name];
  });
}

describe("docs/architecture.md's layout tree", () => {
  const entries = layout();

  it("names only paths that exist", () => {
    expect(entries.length).toBeGreaterThan(20);
    expect(entries.filter((e) => !exists(e.path)).map((e) => e.path)).toEqual([]);
  });

  it("names each module in a description where the tree says it is", () => {
    const misplaced: string[] = [];
    for (const e of entries) {
      const here = filesUnder(e.path);
      for (const [mentioned] of e.text.matchAll(/[\w./-]+\.(?:ts|mjs)\b/g)) {
        const found = mentioned.includes("/")
          ? exists(`${SRC}/${mentioned}`) || exists(mentioned)
          : here.includes(mentioned);
        if (!found) misplaced.push(`${e.path}: ${mentioned}`);
      }
    }
    expect(misplaced).toEqual([]);
  });

  it("has a line for every directory and module of the server's source, every package and example", () => {
    const named = entries.map((e) => ({ ...e, path: e.path.replace(/\/$/, "") }));
    // A line of its own, one beneath it, or its directory's line naming it.
    const covered = (rel: string) =>
      named.some(
        (n) =>
          n.path === rel ||
          n.path.startsWith(`${rel}/`) ||
          (n.path === path.dirname(rel) && n.text.includes(path.basename(rel))),
      );
    const dirsAndModules = (dir: string) =>
      fs
        .readdirSync(path.join(root, dir), { withFileTypes: true })
        .filter((e) => e.isDirectory() || (e.name.endsWith(".ts") && !e.name.endsWith(".test.ts")))
        .map((e) => `${dir}/${e.name}`);
    const wanted = [
      ...dirsAndModules(SRC),
      ...dirsAndModules(`${SRC}/operations`),
      ...fs.readdirSync(path.join(root, "packages")).map((p) => `packages/${p}`),
      ...fs.readdirSync(path.join(root, "examples")).map((p) => `examples/${p}`),
    ];
    expect(wanted.filter((rel) => !covered(rel))).toEqual([]);
  });
});
