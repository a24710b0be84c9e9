import type { VelocityKind, VelocityLimit, VelocityWeights } from "./signals/velocity.js";

/**
 * Parameters of the decision model. The built-in policy applies to every tenant until tenant policy
 * documents arrive; docs/decisions.md explains each number.
 */
export interface DecisionPolicy {
  version: string;
  /** Prior probability that an attempt is abusive, before any evidence. */
  prior: number;
  /** Share of abusive attempts that get through a challenge anyway. */
  challengeLeak: number;
  /** Half-width of the uncertainty band in log-odds, by how many evidence channels were present (0..4+). */
  spreadByChannels: readonly number[];
  weights: {
    uaMissing: number;
    uaAutomation: number;
    headersMissingPerGroup: number;
    browserConsistent: number;
    emailDisposable: number;
    velocity: VelocityWeights;
  };
  velocity: Readonly<Record<VelocityKind, VelocityLimit>>;
  /** Below this risk estimate a request with consistent browser evidence is classified human. */
  humanMaxRisk: number;
}

export const DEFAULT_POLICY: DecisionPolicy = Object.freeze({
  version: "builtin@1",
  prior: 0.08,
  challengeLeak: 0.3,
  spreadByChannels: [1.5, 1.2, 0.9, 0.75, 0.6],
  weights: {
    uaMissing: 2.5,
    uaAutomation: 3.5,
    headersMissingPerGroup: 1.5,
    browserConsistent: -1.0,
    emailDisposable: 3.0,
    velocity: { overLimit: 1.5, perDoubling: 1.0, cap: 4.0 },
  },
  velocity: {
    ip_network: { limit: 30, windowMs: 3_600_000 },
    email_hash: { limit: 3, windowMs: 3_600_000 },
  },
  humanMaxRisk: 0.2,
});
