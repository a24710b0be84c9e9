/**
 * A finding is one piece of evidence a signal contributes to the decision: a log-odds weight
 * (positive raises the abuse estimate), a display sentence, and flags the classifier reads.
 */
export interface Finding {
  id: string;
  logOdds: number;
  reason: string;
  /** Evidence that a program, not a person's browser, made the request. */
  automation?: boolean;
}
