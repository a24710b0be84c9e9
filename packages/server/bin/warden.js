#!/usr/bin/env node
// Thin launcher: the CLI is compiled TypeScript (dist/, built by `npm run build`; the npm package ships it).
import { runCli } from "../dist/cli/main.js";

const code = await runCli(process.argv.slice(2));
process.exitCode = code;
// A command that failed exits even if something it opened still holds the event loop (a pool that
// never connected, a timer): a `warden serve` that cannot start must not stay alive without
// listening, where a supervisor would never restart it.
if (code !== 0) setTimeout(() => process.exit(code), 1000).unref();
