/**
 * RFC 4180 CSV: a header row, then one row per record; fields with a comma, quote or line break are
 * quoted, and so are fields with a semicolon or a tab, the separators spreadsheets in many locales
 * split on (unquoted, `x;=cmd…` would become a cell that starts with `=`). A field starting with =,
 * +, - or @ is prefixed with an apostrophe so a spreadsheet never runs it as a formula
 * (attacker-controlled values such as action and session reach these tables).
 */
export function toCsv(columns: readonly string[], rows: readonly (readonly unknown[])[]): string {
  const lines = [columns, ...rows].map((row) => row.map(field).join(","));
  return `${lines.join("\r\n")}\r\n`;
}

function field(value: unknown): string {
  if (value === null || value === undefined) return "";
  let text = typeof value === "object" ? JSON.stringify(value) : String(value);
  if (/^[=+\-@\t\r]/.test(text) && typeof value !== "number") text = `'${text}`;
  return /[",;\t\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
