import { describe, expect, it } from "vitest";
import type { RiskGroup } from "../../store/interfaces.js";
import { DEFAULT_MODEL } from "../verify/decisionModel.js";
import { whatIf } from "./whatIf.js";

const group = (over: Partial<RiskGroup>): RiskGroup => ({
  action: "signup",
  risk: { estimate: 0.3, low: 0.2, high: 0.4, raised: false },
  actorType: "unknown",
  decidedBy: "model",
  decision: "challenge",
  count: 1,
  ...over,
});

describe("what-if replays the attempts the engine scored", () => {
  it("replays the model's decisions and the scored re-verify standing for a degraded first verdict; keeps rules' and unscored ones", () => {
    const groups = [
      group({ decidedBy: "model" }),
      group({ decidedBy: "clear" }),
      group({ decidedBy: "rule", decision: "deny" }),
      group({ decidedBy: "degraded", risk: null }),
    ];
    // A false challenge far costlier than a false allow: a replayed 30% risk is allowed.
    const result = whatIf(
      groups,
      [],
      { falseAllow: 1, falseChallenge: 1000, falseDeny: 1000 },
      DEFAULT_MODEL,
    );
    expect(result.replayed).toBe(2);
    expect(result.kept).toBe(2);
    expect(result.whatIf).toEqual({ allow: 2, challenge: 1, deny: 1 });
  });
});
