// Types for a page that loads @warden/browser without a bundler, compiled by TypeScript on its own:
// reference them once (`/// <reference types="@warden/browser/page" />`, or "types" in tsconfig).
// - The ES module served from your site at /warden/warden.js (the package's dist/, served as is):
//   `import { watchPage } from "/warden/warden.js"` gets the package's own types.
// - The script-tag build (dist/warden.iife.js): the global `WardenBrowser`.

declare module "*/warden/warden.js" {
  export * from "@warden/browser";
}

declare const WardenBrowser: typeof import("@warden/browser");
