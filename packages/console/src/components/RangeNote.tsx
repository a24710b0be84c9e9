import { dateTime } from "../format.js";
import type { RangeEcho } from "../types.js";

/** The period and action the figures below are for, as the API echoed them (data-* hold the ISO times). */
export function RangeNote({ echo, extra }: { echo: RangeEcho; extra?: string }) {
  return (
    <p class="range-note" data-testid="range-note" data-since={echo.since} data-until={echo.until}>
      {dateTime(echo.since)} to {dateTime(echo.until)}
      {echo.action ? (
        <>
          {" "}
          · action <code>{echo.action}</code>
        </>
      ) : (
        " · all actions"
      )}
      {extra ? ` · ${extra}` : ""}
    </p>
  );
}
