import { defineWardenChallenge } from "./element.js";
import { protectMarkedForms } from "./forms.js";
import { setDefaultWorkerUrl } from "./solver.js";

export { defineWardenChallenge, WardenChallengeElement } from "./element.js";
export type { LayoutProbe, PageEnvironment } from "./environment.js";
export { protectForms } from "./forms.js";
export {
  type PageBehaviour,
  type PageReport,
  type PageWatch,
  type PageWatchOptions,
  watchPage,
} from "./pageWatch.js";
export { solveProofOfWork } from "./precompute.js";
export type { ScopeField } from "./scopeView.js";
export { type BrowserSignals, collectSignals, type SignalOptions } from "./signals.js";
export { type Solution, SolveError, type SolveOptions, type SolveProgress } from "./solver.js";
export {
  type DeviceAttestationInstructions,
  type DeviceAttestationProof,
  deviceAttestationProof,
  deviceAttestationSupported,
} from "./webauthn.js";

// The worker script is served beside this one: from the module's URL, or (script-tag build) from
// the <script> element that loaded it.
const here =
  (typeof document !== "undefined" && (document.currentScript as HTMLScriptElement | null)?.src) ||
  (import.meta as { url?: string }).url;
if (here) setDefaultWorkerUrl(new URL("warden-pow-worker.js", here));
defineWardenChallenge();
protectMarkedForms();
