import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { POLICY_FILE, policySetCommand } from "../../../console/src/cliCommands.js";
import { demoBanner } from "../admin/bootstrap.js";
import { tempDir } from "../testing/harness.js";
import { commandNames, parseCommandLine, runCli } from "./main.js";

/**
 * Every `warden …` command the documentation prints is one the CLI accepts (its command, options and
 * arguments, placeholders filled in; a span with only a command's name is prose naming it), and the commands the console prints run against a real SQLite
 * store: the what-if page's `policy set`, and the key command docs/console.md gives for signing in.
 */
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");

function docs(): string[] {
  const dirs = ["docs", ...["packages", "examples"].flatMap((d) => listed(d).map((p) => path.join(d, p)))];
  const files = ["README.md", ...dirs.flatMap((d) => listed(d).map((f) => path.join(d, f)))];
  return files.filter((f) => f.endsWith(".md") && fs.existsSync(path.join(REPO, f)));
}
function listed(dir: string): string[] {
  const full = path.join(REPO, dir);
  return fs.existsSync(full) && fs.statSync(full).isDirectory() ? fs.readdirSync(full) : [];
}

/** The command lines a text prints in code spans: `warden <command> …` (or `npx warden …`). */
function printedCommands(text: string): string[] {
  return [...text.matchAll(/`(?:npx )?(warden [a-z][^`]*)`/g)].map((m) =>
    (m[1] as string).replace(/\\\|/g, "|"),
  );
}

/**
 * The argument vectors a usage line stands for: optional parts `[…]` taken, each alternative of
 * `(a | b)` on its own, placeholders (`<tenant>`, `…`) filled with a value.
 */
function argvsOf(command: string): string[][] {
  const alternatives = /\(([^()]*\|[^()]*)\)/.exec(command);
  if (alternatives) {
    return (alternatives[1] as string)
      .split("|")
      .flatMap((choice) => argvsOf(command.replace(alternatives[0], choice.trim())));
  }
  const filled = command
    .replace(/[[\]]/g, " ")
    .replace(/<[^>]*>/g, "x")
    .replace(/…/g, "x");
  return [filled.split(/\s+/).filter(Boolean).slice(1)];
}

/** Why the CLI would refuse `argv`; a span that is only a command's name (prose naming it) is fine. */
function refusal(argv: string[]): string | undefined {
  if (commandNames().includes(argv.join(" "))) return undefined;
  try {
    return parseCommandLine(argv) ? undefined : "names no command";
  } catch (err) {
    return (err as Error).message;
  }
}

const dir = tempDir();
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const env = {
  ...process.env,
  WARDEN_DATABASE_URL: `sqlite:${path.join(dir, "cli.db")}`,
  WARDEN_LOG_LEVEL: "silent",
};

async function run(commandLine: string): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const argv = commandLine.split(/\s+/).slice(1);
  const code = await runCli(argv, { out: (l) => out.push(l), err: (l) => err.push(l) }, env);
  return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("the commands Warden prints", () => {
  it("every `warden …` command in the README and docs names a command whose options and arguments the CLI accepts", () => {
    const refused: string[] = [];
    let checked = 0;
    for (const file of docs()) {
      for (const command of printedCommands(fs.readFileSync(path.join(REPO, file), "utf8"))) {
        for (const argv of argvsOf(command)) {
          checked++;
          const why = refusal(argv);
          if (why) refused.push(`${file}: \`${command}\` (as ${argv.join(" ")}): ${why}`);
        }
      }
    }
    expect(refused).toEqual([]);
    expect(checked).toBeGreaterThan(20);
  });

  it("the `Try:` curl `npm start` prints on a first run is the README's first request, with the key it printed", () => {
    const readme = fs.readFileSync(path.join(REPO, "README.md"), "utf8");
    const block = /## A first request[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
    const documented = block
      .replace(/\\\n\s*/g, " ")
      .split("\n")
      .find((line) => line.startsWith("curl "));
    const banner = demoBanner(
      { keyId: "key_1", apiKey: "wdn_printed", tenantId: "demo", scopes: ["verify:write"] },
      "http://127.0.0.1:8080",
    );
    const printed = /^Try: (curl .*)$/m.exec(banner)?.[1];
    expect(documented).toBeDefined();
    expect(printed).toBe(documented?.replace("$WARDEN_KEY", "wdn_printed").replace(/\s+/g, " "));
  });

  it("the what-if page's policy command stores the policy it shows as the tenant's next version", async () => {
    expect((await run("warden tenant create integ")).code).toBe(0);
    const policy = { decisionCosts: { falseAllow: 4, falseChallenge: 1, falseDeny: 12 } };
    fs.writeFileSync(path.join(dir, POLICY_FILE), JSON.stringify(policy));
    const printed = policySetCommand("integ", path.join(dir, POLICY_FILE));
    const stored = await run(printed);
    expect(stored, printed).toMatchObject({
      code: 0,
      out: expect.stringMatching(/stored policy v1 for tenant integ/),
    });
    expect(JSON.parse((await run("warden policy get --tenant integ")).out)).toEqual(policy);
    // The form the page printed before: the CLI refuses it (exit 2) with its usage.
    const positional = await run(`warden policy set integ ${path.join(dir, POLICY_FILE)}`);
    expect(positional).toMatchObject({ code: 2, err: expect.stringMatching(/unexpected argument "integ"/) });
  });

  it("docs/console.md's sign-in key command issues a key with ledger:read", async () => {
    const text = fs.readFileSync(path.join(REPO, "docs/console.md"), "utf8");
    const printed = printedCommands(text).find((c) => c.startsWith("warden key create"));
    expect(printed).toBeDefined();
    const created = await run(`${(printed as string).replace(/<[^>]*>/g, "integ")} --json`);
    expect(created.code, created.err).toBe(0);
    expect(JSON.parse(created.out)).toMatchObject({ tenantId: "integ", scopes: ["ledger:read"] });
  });
});
