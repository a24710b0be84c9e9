import type { ComponentChildren } from "preact";

/** One key figure: a label, the number (raw digits, for readers and tests) and a line of detail. */
export function Tile(props: {
  label: string;
  value: string;
  testId: string;
  detail?: ComponentChildren;
  tone?: string;
}) {
  return (
    <div class={props.tone ? `tile tone-${props.tone}` : "tile"}>
      <dt>{props.label}</dt>
      <dd>
        <span class="figure" data-testid={props.testId}>
          {props.value}
        </span>
        {props.detail ? <span class="detail">{props.detail}</span> : null}
      </dd>
    </div>
  );
}
