import { count, percent } from "../format.js";
import type { AttemptTotals } from "../stats.js";
import { Tile } from "./Tile.js";

/** The endings shown, in order, with their tile's label and tone. */
const ENDINGS: { key: keyof AttemptTotals; label: string; tone?: string }[] = [
  { key: "allowed", label: "Allowed at once", tone: "allow" },
  { key: "cleared", label: "Challenged, then cleared", tone: "challenge" },
  { key: "challenged", label: "Challenged, not cleared", tone: "challenge" },
  { key: "denied", label: "Denied", tone: "deny" },
  { key: "degraded", label: "Degraded" },
];

/**
 * Attempts by how they ended: a challenged attempt whose clear a re-verify redeemed counts once, as
 * cleared (not as a challenge and an allow), in the period of its first verdict.
 */
export function AttemptTiles({ t, logOnly }: { t: AttemptTotals; logOnly: number }) {
  return (
    <dl class="tiles">
      <Tile label="Attempts" value={count(t.total)} testId="attempts-total" />
      {ENDINGS.map(({ key, label, tone }) => (
        <Tile
          key={key}
          label={label}
          value={count(t[key])}
          testId={`attempts-${key}`}
          {...(tone ? { tone } : {})}
          detail={percent(t[key], t.total)}
        />
      ))}
      <Tile label="Log-only verdicts" value={count(logOnly)} testId="count-log-only" />
    </dl>
  );
}
