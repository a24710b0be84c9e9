import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, api } from "../api.js";
import { CsvLink } from "../components/CsvLink.js";
import { DataTable } from "../components/DataTable.js";
import { FiltersBar } from "../components/FiltersBar.js";
import { PageHeading } from "../components/PageHeading.js";
import { RangeNote } from "../components/RangeNote.js";
import { Status } from "../components/Status.js";
import { type Filters, rangeQuery } from "../filters.js";
import { count, dateTime } from "../format.js";
import { useApi } from "../hooks.js";
import type { CampaignRow, CampaignStats, DenyRuleAnswer, RuleWhatIf } from "../types.js";

interface Props {
  filters: Filters;
  onFilters(f: Filters): void;
  /** The session's key has policy:write: the page offers deny rules. */
  canDeny: boolean;
}

/** What each kind of mark is, in words. */
const KIND_LABELS: Record<CampaignRow["kind"], string> = {
  environment: "Page environment",
  shape: "Request shape",
  tls: "TLS fingerprint (JA4)",
  userAgent: "User agent",
  emailDomain: "Email domain",
  network: "Network",
};

/** What attempts later labelled abusive share, and one deny rule at a time, decided by a person. */
export function CampaignsPage({ filters, onFilters, canDeny }: Props) {
  const query = rangeQuery(filters);
  const stats = useApi<CampaignStats>("/v1/stats/campaigns", query);
  const [chosen, setChosen] = useState<CampaignRow | null>(null);
  const [applied, setApplied] = useState<DenyRuleAnswer | null>(null);
  const s = stats.data;

  return (
    <>
      <PageHeading title="Campaigns">
        What the attempts later reported as abuse share, and how many other attempts share it. Denying a value
        adds it to the tenant policy's deny list as a new version, after its what-if.
      </PageHeading>
      <FiltersBar filters={filters} onChange={onFilters} />
      <Status loading={stats.loading} errors={[stats.error]} />
      {applied ? (
        <p class="notice" role="status" data-testid="deny-applied">
          {applied.added ? "Applied" : "Already listed"}: <code>{applied.value}</code> is on the deny list{" "}
          <code>{applied.list}</code> of policy{" "}
          <strong data-testid="policy-version">{applied.policyVersion}</strong>
          {applied.added ? ` (was ${applied.previousVersion})` : ""}. Verify applies it within the policy
          refresh.
        </p>
      ) : null}
      {canDeny ? null : (
        <p class="muted" data-testid="deny-needs-scope">
          Denying a value needs a key with <code>policy:write</code>; this session's key can only read.
        </p>
      )}
      {s ? (
        <section aria-labelledby="h-campaigns" data-testid="campaigns">
          <h2 id="h-campaigns">Shared by abusive attempts</h2>
          <RangeNote echo={s} />
          <p class="muted">
            From {count(s.abusiveAttempts)} attempts labelled abusive
            {s.truncated ? " (the newest; there were more)" : ""}. Policy <code>{s.policyVersion}</code>.
          </p>
          <DataTable
            caption="Values shared by at least two attempts labelled abusive, most labelled first"
            rows={s.rows}
            rowKey={(r) => `${r.kind}:${r.value}`}
            testId="campaigns-table"
            empty="No value is shared by two attempts labelled abusive in this range."
            columns={[
              {
                label: "Shared",
                rowHeader: true,
                cell: (r) => (
                  <>
                    <span class="muted">{KIND_LABELS[r.kind]}</span>
                    <br />
                    <code class="value" title={r.value}>
                      {r.value}
                    </code>
                  </>
                ),
              },
              {
                label: "Labelled abusive",
                numeric: true,
                cell: (r) => count(r.labelled),
                testId: (r) => `labelled-${r.kind}`,
              },
              {
                label: "Also sharing it",
                numeric: true,
                cell: (r) => count(r.unlabelled),
                testId: (r) => `unlabelled-${r.kind}`,
              },
              { label: "Of those, good", numeric: true, cell: (r) => count(r.good) },
              {
                label: "Allow / challenge / deny",
                numeric: true,
                cell: (r) =>
                  `${count(r.decisions.allow)} / ${count(r.decisions.challenge)} / ${count(r.decisions.deny)}`,
              },
              { label: "First seen", cell: (r) => dateTime(r.firstSeen) },
              { label: "Last seen", cell: (r) => dateTime(r.lastSeen) },
              {
                label: "Rule",
                cell: (r) =>
                  r.list === null ? (
                    <span class="muted">no deny list</span>
                  ) : r.listed ? (
                    <span class="nowrap" data-testid={`listed-${r.kind}`}>
                      listed
                    </span>
                  ) : canDeny ? (
                    <button
                      type="button"
                      class="secondary small"
                      data-testid={`deny-${r.kind}`}
                      aria-label={`Deny ${KIND_LABELS[r.kind].toLowerCase()} ${r.value}…`}
                      onClick={() => {
                        setApplied(null);
                        setChosen(r);
                      }}
                    >
                      Deny…
                    </button>
                  ) : (
                    <span class="muted">{r.list}</span>
                  ),
              },
            ]}
          />
          <CsvLink path="/v1/stats/campaigns" query={query} label="the campaigns" />
        </section>
      ) : null}
      {chosen?.list ? (
        <DenyDialog
          row={chosen}
          list={chosen.list}
          onClose={() => setChosen(null)}
          onApplied={(answer) => {
            setChosen(null);
            setApplied(answer);
            stats.reload();
          }}
        />
      ) : null}
    </>
  );
}

interface DialogProps {
  row: CampaignRow;
  list: NonNullable<CampaignRow["list"]>;
  onClose(): void;
  onApplied(answer: DenyRuleAnswer): void;
}

/** The rule's what-if over the last 30 days, then the confirmation that applies it. */
function DenyDialog({ row, list, onClose, onApplied }: DialogProps) {
  const whatIf = useApi<RuleWhatIf>("/v1/stats/what-if-rule", { list, value: row.value });
  const [sending, setSending] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    if (dialog.current && !dialog.current.open) dialog.current.showModal();
  }, []);
  const w = whatIf.data;
  const confirm = async (event: Event) => {
    event.preventDefault();
    if (!w || sending) return;
    setSending(true);
    setError(null);
    try {
      onApplied(await api.deny(list, w.value, w.policyVersion));
    } catch (err) {
      setError(err instanceof ApiError ? err : new ApiError(0, "client_error", String(err)));
      // A policy changed since: the what-if is read again, under the current version.
      if (err instanceof ApiError && err.code === "policy_changed") whatIf.reload();
    } finally {
      setSending(false);
    }
  };
  return (
    <dialog
      ref={dialog}
      class="confirm"
      aria-labelledby="deny-title"
      data-testid="deny-dialog"
      onClose={onClose}
    >
      <form method="dialog" onSubmit={confirm}>
        <h2 id="deny-title">Deny this {KIND_LABELS[row.kind].toLowerCase()}?</h2>
        <p>
          <code class="value">{row.value}</code> would be added to the deny list <code>{list}</code>: every
          attempt bearing it is denied (reason <code>tenant_deny_list</code>).
        </p>
        <Status loading={whatIf.loading} errors={[whatIf.error]} />
        {w ? (
          <div data-testid="deny-what-if">
            <p>
              In the last 30 days ({dateTime(w.since)} to {dateTime(w.until)}) it would have matched{" "}
              <strong data-testid="what-if-events">{count(w.events)}</strong> attempts:
            </p>
            <ul>
              <li>
                <strong data-testid="what-if-abusive">{count(w.abusive)}</strong> labelled abusive,{" "}
                <strong data-testid="what-if-good">{count(w.good)}</strong> labelled good (converted or false
                positive), <strong data-testid="what-if-unlabelled">{count(w.unlabelled)}</strong> unlabelled;
              </li>
              <li>
                the engine allowed {count(w.decisions.allow)}, challenged {count(w.decisions.challenge)} and
                denied {count(w.decisions.deny)}:{" "}
                <strong data-testid="what-if-newly">{count(w.newlyDenied)}</strong> would be denied that were
                not.
              </li>
              <li>
                The policy is now <code>{w.policyVersion}</code>; the rule is stored as its next version, and
                the other processes apply it within the policy refresh.
              </li>
            </ul>
          </div>
        ) : null}
        <div class="error-slot" role="alert">
          {error ? (
            <p class="error">
              {error.message}
              {error.code ? <span class="code"> ({error.code})</span> : null}
            </p>
          ) : null}
        </div>
        <div class="dialog-actions">
          <button type="submit" disabled={!w || whatIf.loading || sending} data-testid="deny-confirm">
            {sending ? "Saving…" : "Deny and store the next policy version"}
          </button>
          <button type="button" class="secondary" disabled={sending} onClick={() => dialog.current?.close()}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}
