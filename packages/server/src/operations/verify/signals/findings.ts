import type { ReasonCode } from "../reasonCodes.js";

/**
 * A finding is one piece of evidence a signal contributes to the decision: a log-odds weight
 * (positive raises the abuse estimate), a display sentence, and flags the classifier reads.
 */
export interface Finding {
  /** Its code in the reason catalogue (reasonCodes.ts). */
  id: ReasonCode;
  logOdds: number;
  reason: string;
  /** Evidence that a program, not a person's browser, made the request. */
  automation?: boolean;
  /**
   * The story it tells with other signals' findings, which count once together (evidence.ts caps each
   * story jointly): `program`, a program naming itself (its user agent, its library's handshake);
   * `disguise`, a browser disguised as another, which contradicts itself in several places at once
   * (a person's user-agent switcher does too).
   */
  story?: Story;
}

/** The stories findings tell together (Finding.story). */
export type Story = "program" | "disguise";

/**
 * Findings that tell one story count once, jointly at most `cap`: each takes what the ones before it
 * left (the others keep their weight). Used where a person's tool produces several of them at once.
 */
export function capJointly(findings: Finding[], inGroup: (f: Finding) => boolean, cap: number): Finding[] {
  let left = cap;
  return findings.map((f) => {
    if (!inGroup(f) || f.logOdds <= 0) return f;
    const logOdds = Math.min(f.logOdds, left);
    left -= logOdds;
    return { ...f, logOdds };
  });
}
