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
//   --no-ja4           the doors pass no JA4 to the app (a plain reverse proxy in front of it)
// Campaign mode (lib/campaignRun.mjs), instead of N signups per class:
//   --campaign a,b     one campaign per bot class (ids or id prefixes), one after the other
//   --campaign-size N  signups per campaign (default 30), each from its own residential /24
//   --people N         people's signups before each campaign, and as many after (default 10)
//   --spread S         the campaign's signups start over S seconds (default 180)
//   --report-after N   once a campaign has N accounts, report them as abuse_confirmed (feedback)
import fs from "node:fs";
import { parseArgs } from "node:util";
import { CLIENTS } from "./clients/index.mjs";
import { formatCampaignTable } from "./lib/campaign.mjs";
import { runCampaigns } from "./lib/campaignRun.mjs";
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
    "no-ja4": { type: "boolean", default: false },
    campaign: { type: "string" },
    "campaign-size": { type: "string", default: "30" },
    people: { type: "string", default: "10" },
    spread: { type: "string", default: "180" },
    "report-after": { type: "string" },
  },
});

/** A whole number of at least `min`, or exit with the flag's name. */
function whole(name, text, min) {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min) {
    console.error(`--${name} must be a whole number of at least ${min}`);
    process.exit(2);
  }
  return n;
}
const list = (text) =>
  text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
const policy = values.policy ? JSON.parse(fs.readFileSync(values.policy, "utf8")) : undefined;
const log = values.quiet ? () => {} : (line) => console.error(line);

if (values.list) {
  for (const c of CLIENTS) console.log(`${c.id.padEnd(34)} ${c.group.padEnd(6)} ${c.label}`);
  process.exit(0);
}
if (values.campaign !== undefined) {
  const size = whole("campaign-size", values["campaign-size"], 1);
  const people = whole("people", values.people, 0);
  const spread = whole("spread", values.spread, 0);
  const reportAfter = values["report-after"] ? whole("report-after", values["report-after"], 1) : undefined;
  const { results, seconds, peopleRun, peopleMissing } = await runCampaigns({
    ids: list(values.campaign),
    size,
    people,
    spreadMs: spread * 1000,
    ja4: !values["no-ja4"],
    reportAfter,
    pageModel: values["page-model"],
    policy,
    log,
  });
  console.log(
    `\n${results.length} campaign(s) of ${size} signups over ${spread} s, each signup from its own residential /24; ${people} people's signups before and ${people} after each (${peopleRun.join(", ") || "none"}${
      peopleMissing.length ? `; NOT RUN here: ${peopleMissing.join(", ")}` : ""
    }); ${seconds} s\n`,
  );
  console.log(formatCampaignTable(results, { reasons: values.reasons }));
  if (values.json) {
    const plain = results.map((r) => ({
      ...r,
      ja4Seen: [...r.ja4Seen],
      reasons: Object.fromEntries(r.reasons),
    }));
    fs.writeFileSync(values.json, JSON.stringify(plain, null, 2));
  }
  process.exit(0);
}

const signups = whole("signups", values.signups, 1);
const only = values.only ? list(values.only) : [];
const { rows, seconds } = await evaluate({
  signups,
  only,
  pageModel: values["page-model"],
  policy,
  log,
  ja4: !values["no-ja4"],
});
console.log(
  `\n${signups} signup(s) per client, each from its own residential /24${values["no-ja4"] ? ", no JA4 passed" : ""}; ${seconds} s\n`,
);
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
