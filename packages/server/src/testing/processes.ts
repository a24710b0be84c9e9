export { freePort, startWarden, type WardenProcess, wardenCli } from "../lib/wardenProcess.js";
