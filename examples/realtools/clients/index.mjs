// Every client class, in the order of the table.
import { clients as carefulBrowsers } from "./carefulBrowsers.mjs";
import { clients as chromiumHeaders } from "./chromiumHeaders.mjs";
import { clients as curlCffi } from "./curlCffi.mjs";
import { clients as gotScraping } from "./gotScraping.mjs";
import { clients as headerSets } from "./headerSets.mjs";
import { clients as impit } from "./impit.mjs";
import { clients as patchedPlaywright } from "./patchedPlaywright.mjs";
import { clients as patchrightPersistent } from "./patchrightPersistent.mjs";
import { clients as personChromium } from "./personChromium.mjs";
import { clients as personHeaderSets } from "./personHeaderSets.mjs";
import { clients as playwrightDisguised } from "./playwrightDisguised.mjs";
import { clients as playwrightHeadful } from "./playwrightHeadful.mjs";
import { clients as playwrightHeadless } from "./playwrightHeadless.mjs";
import { clients as stealthKits } from "./stealthKits.mjs";

/** @type {import("./types.mjs").ClientClass[]} */
export const CLIENTS = [
  ...gotScraping,
  ...chromiumHeaders,
  ...headerSets,
  ...playwrightHeadless,
  ...playwrightDisguised,
  ...patchedPlaywright,
  ...playwrightHeadful,
  ...patchrightPersistent,
  ...stealthKits,
  ...impit,
  ...curlCffi,
  ...carefulBrowsers,
  ...personChromium,
  ...personHeaderSets,
];
