import { describe, expect, it } from "vitest";
import { actorTypeText, confidenceText, decidedByText } from "./verdictView.js";

describe("the event page's verdict facts", () => {
  it("a deny-list deny is shown as the tenant rule's: no actor or confidence presented as the decision's", () => {
    // As verify records it: the model's reading of a browser, and the confidence the verdict carried.
    for (const confidence of [1, 0]) {
      expect(decidedByText("rule")).toMatch(/^a tenant rule/);
      expect(actorTypeText("rule", "human")).toBe(
        "human, as the model read the evidence (the rule decided, not the model)",
      );
      expect(confidenceText("rule", confidence)).toBe("none: a tenant rule decided, not the model");
    }
  });

  it("a scored decision shows the model's actor type and confidence as they are", () => {
    expect(decidedByText("model")).toMatch(/^the model/);
    expect(actorTypeText("model", "agent_abusive")).toBe("agent abusive");
    expect(confidenceText("model", 0.452)).toBe("0.45");
  });

  it("an honoured clear and a degraded verdict were never scored: their placeholders are not shown as findings", () => {
    for (const [decidedBy, confidence] of [
      ["clear", 1],
      ["degraded", 0],
    ] as const) {
      expect(decidedByText(decidedBy)).toMatch(/not scored/);
      expect(actorTypeText(decidedBy, "unknown")).toBe("not classified: nothing was scored");
      expect(confidenceText(decidedBy, confidence)).toBe("none: nothing was scored");
    }
  });
});
