import type { TenantPolicy } from "../../../policy/tenantPolicy.js";
import type { AgentIdentity } from "../../../webBotAuth/verifyAgent.js";
import type { DecisionModel } from "../decisionModel.js";
import type { ReasonCategory } from "../reasonCodes.js";
import type { VerifyRequest } from "../schema.js";
import type { HeaderMap } from "./browserHeaders.js";
import type { EmailSignal } from "./email.js";
import type { Finding } from "./findings.js";
import type { FormDataSignal } from "./formData.js";
import type { HostingMatch } from "./hostingNetworks.js";
import type { Network } from "./ip.js";
import type { PageEnvironment } from "./pageEnvironment.js";
import type { PageToken } from "./pageEvidence.js";
import type { Ja4 } from "./tlsFingerprint.js";
import type { UserAgentSignal } from "./userAgent.js";

/**
 * One verify request as every signal reads it: each field of the subject parsed once, before any
 * signal runs, so signals share the work and never read the raw request differently.
 */
export interface RequestView {
  req: VerifyRequest;
  /** The decision model (its weights are `model.weights`). */
  model: DecisionModel;
  /** The tenant's compiled policy document. */
  policy: TenantPolicy;
  /** Unix milliseconds. */
  nowMs: number;
  ua: UserAgentSignal;
  /** The forwarded headers, names lower-cased. */
  headers: HeaderMap | undefined;
  /** The attempt's network, truncated to /24 or /48. */
  network: Network | undefined;
  email: EmailSignal;
  form: FormDataSignal;
  agent: AgentIdentity;
  /** A verified Web Bot Auth signature: the agent declared itself. */
  declared: boolean;
  ja4: Ja4 | undefined;
  pageToken: PageToken;
  /** What the page read of its browser (subject.page.environment), when it sent an object. */
  environment: PageEnvironment | undefined;
  hosting: HostingMatch | undefined;
}

/**
 * A signal: one kind of evidence verify reads from a request. Adding one is a module implementing
 * this and one line in registry.ts (CONTRIBUTING.md, "Add a signal").
 */
export interface Signal<Code extends string = string> {
  /** What it reads, in a few words (docs/decisions.md lists the signals). */
  readonly name: string;
  /** Every reason code its findings carry, with its category; the reason catalogue is built from these. */
  readonly codes: Readonly<Record<Code, ReasonCategory>>;
  /**
   * A verified agent declared itself: this signal's evidence about automation is then explained, not
   * suspicious, and the signal is not read.
   */
  readonly explainedByDeclaredAgent?: boolean;
  /**
   * Findings of this signal that show a program or a disguise at the browser, so that its consistent
   * headers take nothing off the risk (browserHeaders' findings are then dropped).
   */
  readonly contradictsBrowser?: (finding: Finding) => boolean;
  findings(view: RequestView): Finding[];
}
