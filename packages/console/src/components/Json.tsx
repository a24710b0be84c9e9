/** JSON as an indented block that scrolls (and can be reached by keyboard to scroll it). */
export function Json({
  value,
  label,
  testId,
  id,
}: {
  value: unknown;
  label: string;
  testId?: string;
  id?: string;
}) {
  return (
    <section class="json-block" aria-label={label}>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard. */}
      <pre class="json" tabIndex={0} data-testid={testId} id={id}>
        {JSON.stringify(value, null, 2)}
      </pre>
    </section>
  );
}
