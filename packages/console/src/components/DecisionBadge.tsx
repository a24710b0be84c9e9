/** A decision in words (and colour), with what log-only mode would have done and whether it was degraded. */
export function DecisionBadge(props: {
  decision: string;
  wouldBe?: string;
  mode?: string;
  degraded?: boolean;
  testId?: string;
}) {
  const { decision, wouldBe, mode, degraded, testId } = props;
  return (
    <span class="badge-group">
      <span class={`badge badge-${decision}`} data-testid={testId}>
        {decision}
      </span>
      {mode === "log_only" && wouldBe && wouldBe !== decision ? (
        <span class="note"> log only, would be {wouldBe}</span>
      ) : mode === "log_only" ? (
        <span class="note"> log only</span>
      ) : null}
      {degraded ? <span class="note"> degraded</span> : null}
    </span>
  );
}
