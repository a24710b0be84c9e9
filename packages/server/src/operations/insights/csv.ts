/**
 * RFC 4180 CSV: a header row, then one row per record; fields with a comma, quote or line break are
 * quoted, and so are fields with a semicolon or a tab, the separators spreadsheets in many locales
 * split on (unquoted, `x;=cmd…` would become a cell that starts with `=`). A field starting with =,
 * +, - or @ is prefixed with an apostrophe so a spreadsheet never runs it as a formula
 * (attacker-controlled values such as action and session reach these tables).
 */
export function toCsv(columns: readonly string[], rows: readonly (readonly unknown[])[]): string {
  return csvLines([columns, ...rows]);
}

/**
 * Rows as CSV lines, each ended by CRLF ("" for none): the text of a streamed export is its header's
 * lines followed by each batch's, byte for byte what toCsv makes of the same rows.
 */
export function csvLines(rows: readonly (readonly unknown[])[]): string {
  if (rows.length === 0) return "";
  return `${rows.map((row) => row.map(field).join(",")).join("\r\n")}\r\n`;
}

function field(value: unknown): string {
  if (value === null || value === undefined) return "";
  // Nothing below applies to these (no prefix for numbers; their text holds no separator or quote).
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  let text = typeof value === "object" ? JSON.stringify(value) : String(value);
  if (/^[=+\-@\t\r]/.test(text) && typeof value !== "number") text = `'${text}`;
  return /[",;\t\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
