import { agentSignatureSignal } from "./agentSignature.js";
import { browserHeadersSignal } from "./browserHeaders.js";
import { browserSignalsSignal } from "./browserSignals.js";
import { clientHintsSignal } from "./clientHints.js";
import { emailSignal } from "./email.js";
import { fetchMetadataSignal } from "./fetchMetadata.js";
import { formDataSignal } from "./formData.js";
import { headerOrderSignal } from "./headerOrder.js";
import { hostingNetworkSignal } from "./hostingNetworks.js";
import { pageEnvironmentSignal } from "./pageEnvironment.js";
import { pageEvidenceSignal } from "./pageEvidence.js";
import { pageLanguageSignal } from "./pageLanguage.js";
import { tlsSignal } from "./tlsFingerprint.js";
import { userAgentSignal } from "./userAgent.js";

/**
 * The signals verify reads, in the order their findings are listed (and capped jointly, evidence.ts).
 * A new signal is one line here.
 */
export const SIGNALS = [
  agentSignatureSignal,
  userAgentSignal,
  browserHeadersSignal,
  clientHintsSignal,
  headerOrderSignal,
  fetchMetadataSignal,
  tlsSignal,
  browserSignalsSignal,
  pageEvidenceSignal,
  pageEnvironmentSignal,
  pageLanguageSignal,
  emailSignal,
  formDataSignal,
  hostingNetworkSignal,
] as const;

import type { Signal } from "./signal.js";

type CodesOf<S> = S extends Signal<infer C> ? C : never;
/** Every reason code a signal's finding can carry. */
export type SignalCode = CodesOf<(typeof SIGNALS)[number]>;
