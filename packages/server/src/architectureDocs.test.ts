import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import vitestConfig, { MAIN_TESTS } from "../../../vitest.config.js";
import unitConfig from "../../../vitest.unit.config.js";

/**
 * docs/architecture.md against the tree and the test configuration: its folder map names every
 * source file of the server on its folder's line and nothing that is not there, and its "How the
 * suite runs" table and lists say what vitest.config.ts and vitest.unit.config.ts do.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const SRC = "packages/server/src";
const doc = fs.readFileSync(path.join(root, "docs/architecture.md"), "utf8");
const exists = (rel: string) => fs.existsSync(path.join(root, rel));
const read = (rel: string) => fs.readFileSync(path.join(root, rel), "utf8");

interface Line {
  /** The path from the repository's root; a folder ends in "/". */
  path: string;
  /** Its description, continuation lines included. */
  text: string;
}

/** The folder map: the first fenced block after "## Architecture". */
function folderMap(): Line[] {
  const start = doc.indexOf("```", doc.indexOf("## Architecture"));
  const block = doc.slice(doc.indexOf("\n", start) + 1, doc.indexOf("```", start + 3));
  const lines: Line[] = [];
  for (const row of block.split("\n")) {
    // A path at column 0 is from the root, at column 2 from packages/server/src/; a description
    // continues at a deeper indent.
    const named = /^( {0,2})(\S+)(.*)$/.exec(row);
    if (named) {
      const [, indent, name, text] = named as unknown as [string, string, string, string];
      lines.push({ path: indent === "" ? name : `${SRC}/${name}`, text });
    } else if (row.trim() !== "") {
      const last = lines.at(-1);
      if (last) last.text += ` ${row.trim()}`;
    }
  }
  return lines;
}

/** Every file under `dir` (from the root), built output and dependencies left out. */
function walk(dir: string): string[] {
  return fs.readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
    if (["node_modules", "dist", "dist-testing", "generated"].includes(e.name)) return [];
    const rel = `${dir}/${e.name}`;
    return e.isDirectory() ? walk(rel) : [rel];
  });
}

/** The modules a description names: `x.ts` (or `.d.ts`, `.mjs`), bare or with a path. */
const modulesIn = (text: string) => [...text.matchAll(/[\w./-]+\.(?:ts|mjs)\b/g)].map((m) => m[0]);

describe("docs/architecture.md's folder map", () => {
  const map = folderMap();
  const sources = walk(SRC).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"));

  it("names only paths that exist", () => {
    expect(map.length).toBeGreaterThan(40);
    expect(map.filter((l) => !exists(l.path)).map((l) => l.path)).toEqual([]);
  });

  it("names each module on the line of the folder that holds it (or by its path)", () => {
    const misplaced = map.flatMap((l) =>
      l.path.endsWith("/")
        ? modulesIn(l.text)
            .filter((m) => !(m.includes("/") ? exists(`${SRC}/${m}`) || exists(m) : exists(`${l.path}${m}`)))
            .map((m) => `${l.path}: ${m}`)
        : [],
    );
    expect(misplaced).toEqual([]);
  });

  it("names every source file of the server on its folder's line, or on a line of its own", () => {
    const unnamed = sources.filter((file) => {
      if (map.some((l) => l.path === file)) return false;
      const folder = map.find((l) => l.path === `${path.posix.dirname(file)}/`);
      return !folder || !modulesIn(folder.text).includes(path.posix.basename(file));
    });
    expect(sources.length).toBeGreaterThan(100);
    expect(unnamed).toEqual([]);
  });

  it("has a line for every package and example", () => {
    const tops = ["packages", "examples"].flatMap((d) =>
      fs
        .readdirSync(path.join(root, d), { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => `${d}/${e.name}/`),
    );
    expect(tops.filter((t) => !map.some((l) => l.path.startsWith(t)))).toEqual([]);
  });
});

interface TestSettings {
  name?: string;
  include?: string[];
  exclude?: string[];
  maxWorkers?: number;
  fileParallelism?: boolean;
  sequence?: { groupOrder?: number };
}
const projects = ((vitestConfig.test?.projects ?? []) as { test: TestSettings }[]).map((p) => p.test);
const unit = unitConfig.test as TestSettings;

/** A vitest glob as a regular expression over paths from the root. */
function glob(pattern: string): RegExp {
  const source = pattern
    .split(/(\*\*\/|\*\*|\*)/)
    .map((part) =>
      part === "**/"
        ? "(?:.*/)?"
        : part === "**"
          ? ".*"
          : part === "*"
            ? "[^/]*"
            : part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"),
    )
    .join("");
  return new RegExp(`^${source}$`);
}
const selects = (settings: TestSettings, file: string) =>
  (settings.include ?? []).some((p) => glob(p).test(file)) &&
  !(settings.exclude ?? []).some((p) => glob(p).test(file));
const filesAtATime = (settings: TestSettings) =>
  settings.fileParallelism === false ? 1 : settings.maxWorkers;

const testFiles = ["packages", "examples"]
  .flatMap((d) => walk(d))
  .filter((f) => f.endsWith(".test.ts"))
  .sort();

/**
 * Whether a test file's source uses a PostgreSQL or Redis server (testing/postgres.ts, redis.ts,
 * redisServers.ts), a Chromium (testing/chromium.ts, playwright) or the compiled server (a `dist/`
 * module, `bin/warden.js`, testing/wardenProcess.ts): what the unit loop goes without. The tools'
 * `@warden/server/dist/….js` is the server's source under vitest (SERVER_SOURCES), no build.
 */
function needsMoreThanNode(source: string): boolean {
  const imported =
    /from "(?:playwright[\w-]*|[^"]*\/(?:testing\/(?:postgres|redis|redisServers|chromium|wardenProcess))\.js)"/;
  const built = /["'`](?!@warden\/server\/dist\/)[^"'`\n]*\/(?:dist\/[^"'`\n]*|bin\/warden)\.js["'`]/;
  return imported.test(source) || built.test(source);
}

/** The "How the suite runs" section: its table's rows and its list's items, by project. */
function suiteSection() {
  const section = doc.slice(doc.indexOf("### How the suite runs"));
  const spans = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);
  const rows = section
    .split("\n")
    .filter((l) => l.startsWith("| `"))
    .map((l) => l.split("|").map((c) => c.trim()))
    .map(([, project = "", atATime = "", files = ""]) => ({
      project: spans(project)[0] as string,
      atATime: Number(atATime),
      files: spans(files).filter((s) => s.includes("/")),
    }));
  const items = new Map<string, string>();
  for (const item of section.split(/\n(?=- \*\*`)/).slice(1)) {
    const name = /^- \*\*`([^`]+)`\*\*/.exec(item)?.[1];
    if (name) items.set(name, item.split("\n\n")[0] as string);
  }
  return { rows, items };
}

describe("docs/architecture.md's account of the test projects", () => {
  const { rows, items } = suiteSection();
  const settingsOf = (project: string) =>
    project === "npm run test:unit" ? unit : projects.find((p) => p.name === project);

  it("lists vitest.config.ts's projects in the order npm test runs them, then the unit loop", () => {
    const ordered = [...projects].sort(
      (a, b) => (a.sequence?.groupOrder ?? 0) - (b.sequence?.groupOrder ?? 0),
    );
    expect(rows.map((r) => r.project)).toEqual([...ordered.map((p) => p.name), "npm run test:unit"]);
  });

  it("gives each project the files it includes and how many run at a time", () => {
    for (const row of rows) {
      const settings = settingsOf(row.project) as TestSettings;
      expect(new Set(row.files), row.project).toEqual(new Set(settings.include));
      expect(row.atATime, row.project).toBe(filesAtATime(settings));
    }
  });

  it("names each test file in the list item of the project that runs it", () => {
    const wrong: string[] = [];
    for (const [project, text] of items) {
      const settings = settingsOf(project);
      expect(settings, project).toBeDefined();
      for (const [, file] of text.matchAll(/`((?:packages|examples)\/[\w./-]+\.test\.ts)`/g)) {
        if (!exists(file as string)) wrong.push(`${project}: ${file} (no such file)`);
        else if (!selects(settings as TestSettings, file as string)) wrong.push(`${project}: ${file}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("npm test runs every test file once, in one project", () => {
    const counts = testFiles.map((f) => [f, projects.filter((p) => selects(p, f)).length] as const);
    expect(counts.filter(([, n]) => n !== 1)).toEqual([]);
  });

  it("the unit loop runs the main project's files but those that need a server, a browser or the build", () => {
    const main = projects.find((p) => p.name === "main") as TestSettings;
    const mainFiles = testFiles.filter((f) => selects(main, f));
    const run = mainFiles.filter((f) => selects(unit, f));
    expect(unit.include).toEqual(MAIN_TESTS.include);
    expect(run.length).toBeGreaterThan(50);
    expect(run.filter((f) => needsMoreThanNode(read(f)))).toEqual([]);
    expect(mainFiles.filter((f) => !run.includes(f) && !needsMoreThanNode(read(f)))).toEqual([]);
  });
});
