#!/usr/bin/env node
// The installed tree cut to what `warden` runs: the Dockerfile's deps stage runs it after npm has
// installed @warden/server's production dependencies (docs/deployment.md, "Docker and Compose").
//   node deploy/runtime-tree.mjs <root>   (root holds node_modules/ and packages/server/package.json)
// 1. Keeps the packages @warden/server reaches from its package.json, found as Node finds them
//    (a package's own node_modules, then each folder above it), through `dependencies`,
//    `optionalDependencies` that are installed and peers that are not optional, and removes every
//    other package: those of the other workspaces that npm's workspace install brings (an optional
//    peer such as stripe's @types/node, which another workspace's dependencies put in the lockfile's
//    production tree), workspace links, and the `.bin` links and npm's record of what it installed,
//    which no longer describe the tree.
// 2. In the packages kept, removes what Node never loads: TypeScript declarations, better-sqlite3's
//    C sources and build leftovers (its compiled module stays), sodium-native's binaries for other
//    platforms, and the IP-to-ASN files the server does not read (it reads the *-num.csv ones).
// Prints the tree's size before and after, and each package removed, as JSON on stdout.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** Files of kept packages that are never loaded, by package: paths relative to the package. */
const UNUSED = {
  "better-sqlite3": (dir) => [
    "deps",
    "src",
    "binding.gyp",
    ...fs
      .readdirSync(path.join(dir, "build"), { withFileTypes: true })
      .filter((e) => e.name !== "Release")
      .map((e) => `build/${e.name}`),
    ...fs
      .readdirSync(path.join(dir, "build", "Release"))
      .filter((name) => name !== "better_sqlite3.node")
      .map((name) => `build/Release/${name}`),
  ],
  "sodium-native": (dir) =>
    fs
      .readdirSync(path.join(dir, "prebuilds"))
      .filter((name) => name !== `${process.platform}-${process.arch}`)
      .map((name) => `prebuilds/${name}`),
  // operations/verify/signals/hostingNetworks.ts reads asn-ipv4-num.csv and asn-ipv6-num.csv.
  "@ip-location-db/asn": () => ["asn-ipv4.csv", "asn-ipv6.csv"],
};
const DECLARATION = /\.d\.[cm]?ts(\.map)?$/;

function size(p) {
  const st = fs.lstatSync(p);
  if (!st.isDirectory()) return st.isSymbolicLink() ? 0 : st.size;
  let n = 0;
  for (const name of fs.readdirSync(p)) n += size(path.join(p, name));
  return n;
}

const readManifest = (dir) => JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));

/** Where `name` resolves from `from`, as Node looks (never above `root`); undefined when absent. */
function resolve(root, from, name) {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, "node_modules", name);
    if (fs.existsSync(path.join(candidate, "package.json"))) return candidate;
    if (dir === root || path.dirname(dir) === dir) return undefined;
  }
}

/** Every package folder in the tree: under each node_modules, scoped or not, nested ones included. */
function packageFolders(modules, out = []) {
  if (!fs.existsSync(modules)) return out;
  for (const entry of fs.readdirSync(modules, { withFileTypes: true })) {
    if (entry.name.startsWith(".")) continue;
    const p = path.join(modules, entry.name);
    if (entry.name.startsWith("@") && entry.isDirectory()) {
      for (const scoped of fs.readdirSync(p)) {
        out.push(path.join(p, scoped));
        packageFolders(path.join(p, scoped, "node_modules"), out);
      }
    } else {
      out.push(p);
      if (entry.isDirectory()) packageFolders(path.join(p, "node_modules"), out);
    }
  }
  return out;
}

/** The folders of the packages `server` reaches at run time. */
export function reachable(root, server) {
  const kept = new Set();
  const queue = [server];
  while (queue.length > 0) {
    const dir = queue.shift();
    const m = readManifest(dir);
    const optionalPeers = new Set(
      Object.entries(m.peerDependenciesMeta ?? {})
        .filter(([, meta]) => meta?.optional === true)
        .map(([name]) => name),
    );
    const edges = [
      ...Object.keys(m.dependencies ?? {}).map((name) => ({ name, optional: false })),
      ...Object.keys(m.optionalDependencies ?? {}).map((name) => ({ name, optional: true })),
      ...Object.keys(m.peerDependencies ?? {})
        .filter((name) => !optionalPeers.has(name))
        .map((name) => ({ name, optional: true })),
    ];
    for (const { name, optional } of edges) {
      const found = resolve(root, dir, name);
      if (found === undefined) {
        if (optional) continue;
        throw new Error(`${m.name} needs ${name}, which is not installed under ${root}`);
      }
      if (!kept.has(found)) {
        kept.add(found);
        queue.push(found);
      }
    }
  }
  return kept;
}

/** Cuts the tree at `root` to what @warden/server runs; returns what it did. */
export function prune(root) {
  root = path.resolve(root);
  const server = path.join(root, "packages", "server");
  const modules = [path.join(root, "node_modules"), path.join(server, "node_modules")];
  const before = modules.reduce((n, m) => n + (fs.existsSync(m) ? size(m) : 0), 0);
  const kept = reachable(root, server);
  const removed = [];
  for (const folder of modules.flatMap((m) => packageFolders(m))) {
    // A folder inside a removed one went with it.
    if (kept.has(folder) || !fs.lstatSync(folder, { throwIfNoEntry: false })) continue;
    removed.push(path.relative(root, folder));
    fs.rmSync(folder, { recursive: true, force: true });
  }
  for (const m of modules) {
    fs.rmSync(path.join(m, ".bin"), { recursive: true, force: true });
    fs.rmSync(path.join(m, ".package-lock.json"), { force: true });
    // Scopes left empty.
    if (fs.existsSync(m)) {
      for (const name of fs.readdirSync(m)) {
        const p = path.join(m, name);
        if (name.startsWith("@") && fs.readdirSync(p).length === 0) fs.rmdirSync(p);
      }
    }
  }
  const trimmed = [];
  for (const folder of kept) {
    const { name } = readManifest(folder);
    for (const rel of UNUSED[name]?.(folder) ?? []) {
      if (!fs.existsSync(path.join(folder, rel))) continue;
      trimmed.push(path.relative(root, path.join(folder, rel)));
      fs.rmSync(path.join(folder, rel), { recursive: true, force: true });
    }
    const walk = (dir) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, entry.name);
        // Nested packages are walked as packages of their own.
        if (entry.isDirectory() && entry.name !== "node_modules") walk(p);
        else if (entry.isFile() && DECLARATION.test(entry.name)) fs.rmSync(p);
      }
    };
    walk(folder);
  }
  const after = modules.reduce((n, m) => n + (fs.existsSync(m) ? size(m) : 0), 0);
  return { packages: kept.size, removed, trimmed, bytesBefore: before, bytesAfter: after };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = process.argv[2];
  if (!root) {
    console.error("usage: node deploy/runtime-tree.mjs <root>");
    process.exit(2);
  }
  const r = prune(root);
  const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;
  console.log(
    JSON.stringify({
      packages: r.packages,
      before: mb(r.bytesBefore),
      after: mb(r.bytesAfter),
      removed: r.removed,
      trimmed: r.trimmed,
    }),
  );
}
