import fs from "node:fs";
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { createMetrics } from "./metrics.js";

/**
 * deploy/prometheus-alerts.yaml is shipped for operators: every rule names an alert, a severity and a
 * summary, and every metric its expressions read is one Warden exports.
 */
const FILE = new URL("../../../../deploy/prometheus-alerts.yaml", import.meta.url);

describe("the shipped Prometheus alert rules", () => {
  it("read only metrics Warden exports, and say what to look at", async () => {
    const doc = YAML.parse(fs.readFileSync(FILE, "utf8")) as {
      groups: {
        name: string;
        rules: {
          alert: string;
          expr: string;
          labels: { severity: string };
          annotations: Record<string, string>;
        }[];
      }[];
    };
    const metrics = createMetrics({ size: 0, dropped: 0, rejected: 0, erased: 0, written: 0 });
    const exported = new Set((await metrics.registry.getMetricsAsJSON()).map((m) => m.name));
    const rules = doc.groups.flatMap((g) => g.rules);
    expect(rules.map((r) => r.alert)).toContain("WardenVerifyMostlyDegraded");
    for (const rule of rules) {
      expect(["page", "ticket"]).toContain(rule.labels.severity);
      expect(rule.annotations.summary).toBeTruthy();
      const names = rule.expr.match(/warden_[a-z_]+/g) ?? [];
      expect(names.length).toBeGreaterThan(0);
      for (const name of names)
        expect({ rule: rule.alert, name, exported: exported.has(name) }).toMatchObject({ exported: true });
    }
  });
});
