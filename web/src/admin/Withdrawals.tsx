import { useState } from "preact/hooks"
import { api, errorText } from "../api"
import { age, formatCents, formatDateTime } from "../money"
import { ErrorNote, Pager, Show, SuccessNote, useConfirm } from "../ui"
import { useLoad } from "../useLoad"
import "./catalog.css"
import type { PageProps } from "./Console"
import { UserLink } from "./nav"

interface Withdrawal {
  readonly id: string
  readonly amountCents: number
  readonly status: string
  readonly requestedAt: string
  readonly rejectionReason: string | null
  readonly user: { id: string; username: string }
  readonly pixKeyType: string
  readonly pixKey: string
  readonly payoutError: string | null
}

interface Page {
  readonly withdrawals: ReadonlyArray<Withdrawal>
  readonly total: number
}

const STATUSES = ["PENDING", "PROCESSING", "COMPLETED", "REJECTED", "CANCELLED", "FAILED"] as const
const LIMIT = 50

/**
 * Withdrawals of one status, paged (the API's order); PENDING first: approve (payout) or reject with a reason.
 * Beside PENDING, how many payouts are PROCESSING (the gateway has them), one click away; each PROCESSING one has
 * Reconcile, which asks the gateway and shows what it found.
 */
const loadPage = async (status: string, page: number) => {
  const [list, processing] = await Promise.all([
    api<Page>(`/admin/withdrawals?page=${page}&limit=${LIMIT}${status === "" ? "" : `&status=${status}`}`),
    status === "PENDING" ? api<Page>("/admin/withdrawals?status=PROCESSING&limit=1") : Promise.resolve(undefined)
  ])
  return { ...list, processing: processing?.total ?? 0 }
}

export const Withdrawals = ({ twoFactorCode }: PageProps) => {
  const [status, setStatus] = useState<string>("PENDING")
  const [page, setPage] = useState(1)
  const [queue, reload] = useLoad(() => loadPage(status, page), [status, page])
  const [dialog, ask] = useConfirm()
  const show = (next: string) => (setOutcomes({}), setReconciled({}), setPage(1), setStatus(next))
  /** What happened to rows acted on here, shown in place of their actions until the next reload. */
  const [outcomes, setOutcomes] = useState<Record<string, Withdrawal>>({})
  /** What a reconciliation found (docs/rules.md#withdrawal-reconcile), in words, by row. */
  const [reconciled, setReconciled] = useState<Record<string, string>>({})
  const [message, setMessage] = useState<{ ok?: string; error?: string }>({})

  const act = async (w: Withdrawal, action: "approve" | "reject", reason?: string) => {
    setMessage({})
    if (action === "approve") {
      const yes = await ask({
        title: `Pay ${formatCents(w.amountCents)} to ${w.user.username}?`,
        body: (
          <p>
            Approving sends <strong>{formatCents(w.amountCents)}</strong> to <strong>{w.user.username}</strong> by PIX
            ({w.pixKeyType} <code>{w.pixKey}</code>) now. A payout cannot be called back.
          </p>
        ),
        confirm: `Approve ${formatCents(w.amountCents)}`
      })
      if (!yes) return
    }
    try {
      const done = await api<Withdrawal>(`/admin/withdrawals/${w.id}/${action}`, {
        method: "POST",
        body: action === "reject" ? { reason } : undefined,
        twoFactorCode
      })
      setOutcomes((now) => ({ ...now, [w.id]: done }))
      setMessage({ ok: `${w.user.username}'s withdrawal of ${formatCents(w.amountCents)}: ${done.status}` })
    } catch (error) {
      setMessage({ error: errorText(error) })
    }
  }

  const reconcile = async (w: Withdrawal) => {
    setMessage({})
    try {
      const done = await api<Withdrawal>(`/admin/withdrawals/${w.id}/reconcile`, { method: "POST" })
      const said = reconcileOutcome(done)
      setOutcomes((now) => ({ ...now, [w.id]: done }))
      setReconciled((now) => ({ ...now, [w.id]: said }))
      setMessage({ ok: `${w.user.username}'s withdrawal of ${formatCents(w.amountCents)}: ${said}` })
    } catch (error) {
      setMessage({ error: errorText(error) })
    }
  }

  return (
    <>
      <div class="toolbar">
        <h1>Withdrawals</h1>
        <select name="status" aria-label="Status" value={status} onChange={(e) => show(e.currentTarget.value)}>
          {STATUSES.map((s) => <option key={s} value={s}>{s}</option>)}
          <option value="">every status</option>
        </select>
        <button class="outline secondary" onClick={() => (setOutcomes({}), setReconciled({}), reload())}>Refresh</button>
      </div>
      {dialog}
      <SuccessNote text={message.ok} />
      <ErrorNote text={message.error} />
      <Show loaded={queue}>
        {({ withdrawals: rows, total, processing }) => (
          <>
            {processing > 0 && (
              <p data-testid="processing-hint">
                {processing} payout(s) PROCESSING at the gateway.{" "}
                <a href="#" onClick={(e) => (e.preventDefault(), show("PROCESSING"))}>Show them</a>
              </p>
            )}
          {rows.length === 0 ? <p>{status === "PENDING" ? "The queue is empty." : "None."}</p> : (
            <div class="overflow-auto">
              <Pager page={page} limit={LIMIT} total={total} onPage={setPage} />
              <table data-testid="withdrawals" class="stack">
                <thead>
                  <tr>
                    <th>User</th>
                    <th class="money">Amount</th>
                    <th>PIX key</th>
                    <th>Age</th>
                    <th>Status</th>
                    <th>Action</th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((w) => {
                    const outcome = outcomes[w.id]
                    return (
                      <tr key={w.id} data-id={w.id}>
                        <td data-label="User">
                          <UserLink user={w.user} />
                        </td>
                        <td data-label="Amount" class="money">{formatCents(w.amountCents)}</td>
                        <td data-label="PIX key">
                          <span>{w.pixKeyType} <small>{w.pixKey}</small></span>
                        </td>
                        <td data-label="Age" title={formatDateTime(w.requestedAt)}>{age(w.requestedAt)}</td>
                        <td data-label="Status" data-testid="status">
                          <span>
                            {(outcome ?? w).status}
                            {(outcome ?? w).payoutError && <small>: {(outcome ?? w).payoutError}</small>}
                          </span>
                        </td>
                        <td data-label="Action">
                          {outcome === undefined && w.status === "PENDING"
                            ? <Actions onApprove={() => act(w, "approve")} onReject={(r) => act(w, "reject", r)} />
                            : (outcome ?? w).status === "PROCESSING"
                            ? (
                              <div class="actions">
                                <ReconcileButton onReconcile={() => reconcile(w)} />
                                {reconciled[w.id] && <small data-testid="reconcile-outcome">{reconciled[w.id]}</small>}
                              </div>
                            )
                            : reconciled[w.id]
                            ? <small data-testid="reconcile-outcome">{reconciled[w.id]}</small>
                            : outcome?.rejectionReason ?? ""}
                        </td>
                      </tr>
                    )
                  })}
                </tbody>
              </table>
            </div>
          )}
          </>
        )}
      </Show>
    </>
  )
}

/** What a reconciliation's answer means (docs/rules.md#withdrawal-reconcile). */
const reconcileOutcome = (w: Withdrawal): string => {
  switch (w.status) {
    case "COMPLETED":
      return "the gateway paid it: COMPLETED"
    case "FAILED":
      return `the gateway reports it failed: FAILED, the amount returned to the balance${w.payoutError ? ` (${w.payoutError})` : ""}`
    case "PENDING":
      return "the gateway never received it: back to PENDING, to approve again or reject"
    case "PROCESSING":
      return "still PROCESSING: the gateway has not settled it yet (or received it less than 2 minutes ago); try again later"
    default:
      return w.status
  }
}

/** Asks the gateway about a PROCESSING payout; no confirmation: it moves money only as the gateway reports it. */
const ReconcileButton = ({ onReconcile }: { onReconcile: () => Promise<void> }) => {
  const [busy, setBusy] = useState(false)
  return (
    <button
      class="outline"
      disabled={busy}
      aria-busy={busy}
      onClick={() => (setBusy(true), onReconcile().finally(() => setBusy(false)))}
    >
      Reconcile
    </button>
  )
}

const Actions = ({ onApprove, onReject }: { onApprove: () => Promise<void>; onReject: (reason: string) => Promise<void> }) => {
  const [busy, setBusy] = useState(false)
  const [rejecting, setRejecting] = useState(false)
  const [reason, setReason] = useState("")
  const run = (action: () => Promise<void>) => {
    setBusy(true)
    action().finally(() => setBusy(false))
  }
  return rejecting
    ? (
      <form
        onSubmit={(e) => {
          e.preventDefault()
          run(() => onReject(reason))
        }}
      >
        <input
          name="reason"
          aria-label="Reason"
          placeholder="Reason"
          required
          value={reason}
          onInput={(e) => setReason(e.currentTarget.value)}
        />
        <button type="submit" disabled={busy}>Reject</button>
        <button type="button" class="outline secondary" onClick={() => setRejecting(false)}>Cancel</button>
      </form>
    )
    : (
      <div class="actions">
        <button disabled={busy} aria-busy={busy} onClick={() => run(onApprove)}>Approve</button>
        <button class="outline" disabled={busy} onClick={() => setRejecting(true)}>Reject…</button>
      </div>
    )
}
