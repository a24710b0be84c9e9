// The table: client | n | allowed at once | challenged | denied | account created, with percentages;
// then each client class's JA4 values.

const pct = (k, n) => (n === 0 ? "-" : `${k} (${Math.round((100 * k) / n)}%)`);

/**
 * One line per client class: the distinct JA4 values its doors passed to the app. A MODEL's is the
 * one it declares for its browser; the JA4 of its own (Node) connections follows in parentheses.
 * @param {import("./evaluate.mjs").Row[]} rows
 */
export function ja4Lines(rows) {
  const width = Math.max(0, ...rows.map((r) => r.id.length));
  const list = (set) => (set.size === 0 ? "none seen" : [...set].sort().join(", "));
  return [
    "JA4 per client (as the door passed it to the app):",
    ...rows.map((r) => {
      const name = `${r.id}:`.padEnd(width + 2);
      if (r.skipped) return `${name}not run`;
      if (!r.model) return `${name}${list(r.ja4)}`;
      return `${name}${list(r.ja4)} (MODEL, declared; its Node connections: ${list(r.tlsJa4)})`;
    }),
  ];
}

/** @param {import("./evaluate.mjs").Row[]} rows @param {{ reasons?: boolean }} [opts] */
export function formatTable(rows, { reasons = false } = {}) {
  const head = ["client", "n", "allowed at once", "challenged", "denied", "account created", "notes"];
  const line = (r) => {
    if (r.skipped) return [r.label, "0", "-", "-", "-", "-", `NOT RUN: ${r.skipped}`];
    const notes = [];
    if (r.other) notes.push(`${r.other} other first answer`);
    if (r.degraded) notes.push(`${r.degraded} degraded`);
    if (r.humanFirst) notes.push(`${r.humanFirst} scored human`);
    if (r.errors.length) notes.push(`${r.errors.length} client errors`);
    if (r.restarts.length) notes.push(`Warden died ${r.restarts.length}× (signup repeated)`);
    notes.push(`${(r.ms / Math.max(1, r.n) / 1000).toFixed(1)} s/signup`);
    return [
      r.label,
      String(r.n),
      pct(r.allowed, r.n),
      pct(r.challenged, r.n),
      pct(r.denied, r.n),
      pct(r.created, r.n),
      notes.join("; "),
    ];
  };
  const sections = [
    ["BOTS (off-the-shelf automation, trying)", rows.filter((r) => r.group === "bots")],
    ["PEOPLE", rows.filter((r) => r.group === "people")],
  ];
  const body = sections.flatMap(([title, list]) =>
    list.length === 0 ? [] : [[`**${title}**`, "", "", "", "", "", ""], ...list.map(line)],
  );
  const widths = head.map((_, i) => Math.max(head[i].length, ...body.map((b) => b[i].length)));
  const fmt = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
  const out = [fmt(head), `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`, ...body.map(fmt)];
  out.push("", ...ja4Lines(rows));
  if (reasons) {
    out.push("");
    for (const r of rows) {
      if (r.skipped || r.reasons.size === 0) continue;
      out.push(`${r.id}:`);
      const top = [...r.reasons.entries()].sort((a, b) => b[1] - a[1]).slice(0, 4);
      for (const [text, count] of top) out.push(`  ${count}× ${text}`);
    }
  }
  return out.join("\n");
}
