#!/usr/bin/env node
// Thin launcher: the CLI is compiled TypeScript (built by `npm install` through the root `prepare` script).
import { runCli } from "../dist/cli/main.js";

process.exitCode = await runCli(process.argv.slice(2));
