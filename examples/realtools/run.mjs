#!/usr/bin/env node
// `npm run eval:real`: off-the-shelf automation and people against examples/signup.
//   --signups N        signups per client class (default 20)
//   --only a,b         only these classes (an id or an id prefix: got-scraping, playwright, person, ...)
//   --page-model FILE  another model of the page's evidence (see lib/pageEvidence.mjs)
//   --policy FILE      the tenant policy (JSON) to measure under; default {"actions":{"signup":{"requirePage":true}}}
//                      as docs/integration.md asks; a file holding null: no policy
//   --reasons          also print each class's most frequent Warden reasons
//   --json FILE        also write the rows as JSON to FILE (with each class's JA4 values)
//   --quiet            no per-signup lines
//   --list             list the classes and exit
import fs from "node:fs";
import { parseArgs } from "node:util";
import { CLIENTS } from "./clients/index.mjs";
import { evaluate } from "./lib/evaluate.mjs";
import { formatTable } from "./lib/table.mjs";

const { values } = parseArgs({
  options: {
    signups: { type: "string", default: "20" },
    only: { type: "string", default: "" },
    "page-model": { type: "string" },
    policy: { type: "string" },
    reasons: { type: "boolean", default: false },
    json: { type: "string" },
    quiet: { type: "boolean", default: false },
    list: { type: "boolean", default: false },
  },
});

if (values.list) {
  for (const c of CLIENTS) console.log(`${c.id.padEnd(34)} ${c.group.padEnd(6)} ${c.label}`);
  process.exit(0);
}
const signups = Number(values.signups);
if (!Number.isInteger(signups) || signups < 1) {
  console.error("--signups must be a positive whole number");
  process.exit(2);
}
const only = values.only
  ? values.only
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean)
  : [];
const { rows, seconds } = await evaluate({
  signups,
  only,
  pageModel: values["page-model"],
  policy: values.policy ? JSON.parse(fs.readFileSync(values.policy, "utf8")) : undefined,
  log: values.quiet ? () => {} : (line) => console.error(line),
});
console.log(`\n${signups} signup(s) per client, each from its own residential /24; ${seconds} s\n`);
console.log(formatTable(rows, { reasons: values.reasons }));
if (values.json) {
  fs.writeFileSync(
    values.json,
    JSON.stringify(
      rows.map((r) => ({
        ...r,
        reasons: Object.fromEntries(r.reasons),
        ja4: [...r.ja4],
        tlsJa4: [...r.tlsJa4],
      })),
      null,
      2,
    ),
  );
}
