import { useState } from "preact/hooks"
import { api, errorText } from "../api"
import { age, formatCents, formatDateTime } from "../money"
import { ErrorNote, Pager, Show, SuccessNote, useConfirm } from "../ui"
import { useLoad } from "../useLoad"
import "./catalog.css"
import type { PageProps } from "./Console"
import { UserLink } from "./nav"
import { peopleText, WITHDRAWAL_STATUSES, type WithdrawalStatus } from "./text/people"
import { ReasonInput } from "./UserActions"
import { withdrawalsText } from "./text/withdrawals"
import type { Outcome } from "./UserActions"

interface Withdrawal {
  readonly id: string
  readonly amountCents: number
  readonly status: WithdrawalStatus
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
  const m = withdrawalsText()
  const w = peopleText()
  const [status, setStatus] = useState<WithdrawalStatus | "">("PENDING")
  const [page, setPage] = useState(1)
  const [queue, reload] = useLoad(() => loadPage(status, page), [status, page])
  const [dialog, ask] = useConfirm()
  const show = (next: WithdrawalStatus | "") => (setOutcomes({}), setReconciled({}), setPage(1), setStatus(next))
  /** What happened to rows acted on here, shown in place of their actions until the next reload. */
  const [outcomes, setOutcomes] = useState<Record<string, Withdrawal>>({})
  /** What a reconciliation found (docs/rules.md#withdrawal-reconcile), in words, by row. */
  const [reconciled, setReconciled] = useState<Record<string, string>>({})
  const [message, setMessage] = useState<Outcome>({})

  const act = async (row: Withdrawal, action: "approve" | "reject", reason?: string) => {
    setMessage({})
    const amount = formatCents(row.amountCents)
    if (action === "approve") {
      const yes = await ask({
        title: m.approveTitle(amount, row.user.username),
        body: <p>{m.approveBody(amount, row.user.username, w.pixKeyType[row.pixKeyType] ?? row.pixKeyType, row.pixKey)}</p>,
        confirm: m.approveConfirm(amount)
      })
      if (!yes) return
    }
    try {
      const done = await api<Withdrawal>(`/admin/withdrawals/${row.id}/${action}`, {
        method: "POST",
        body: action === "reject" ? { reason } : undefined,
        twoFactorCode
      })
      setOutcomes((now) => ({ ...now, [row.id]: done }))
      setMessage({ ok: m.outcome(row.user.username, amount, w.withdrawalStatus[done.status] ?? done.status) })
    } catch (error) {
      setMessage({ error: errorText(error) })
    }
  }

  const reconcile = async (row: Withdrawal) => {
    setMessage({})
    try {
      const done = await api<Withdrawal>(`/admin/withdrawals/${row.id}/reconcile`, { method: "POST" })
      const said = reconcileOutcome(done)
      setOutcomes((now) => ({ ...now, [row.id]: done }))
      setReconciled((now) => ({ ...now, [row.id]: said }))
      setMessage({ ok: m.outcome(row.user.username, formatCents(row.amountCents), said) })
    } catch (error) {
      setMessage({ error: errorText(error) })
    }
  }

  return (
    <>
      <div class="toolbar">
        <h1>{m.title}</h1>
        <select
          name="status"
          aria-label={m.status}
          value={status}
          onChange={(e) => show(e.currentTarget.value as WithdrawalStatus | "")}
        >
          {WITHDRAWAL_STATUSES.map((s) => <option key={s} value={s}>{w.withdrawalStatus[s]}</option>)}
          <option value="">{w.everyStatus}</option>
        </select>
        <button class="outline secondary" onClick={() => (setOutcomes({}), setReconciled({}), reload())}>{m.refresh}</button>
      </div>
      {dialog}
      <SuccessNote text={message.ok} />
      <ErrorNote text={message.error} />
      <Show loaded={queue}>
        {({ withdrawals: rows, total, processing }) => (
          <>
            {processing > 0 && (
              <p data-testid="processing-hint">
                {m.processingHint(processing, w.withdrawalStatus.PROCESSING)}{" "}
                <a href="#" onClick={(e) => (e.preventDefault(), show("PROCESSING"))}>{m.showThem}</a>
              </p>
            )}
          {rows.length === 0 ? <p>{status === "PENDING" ? m.queueEmpty : m.none}</p> : (
            <div class="overflow-auto">
              <Pager page={page} limit={LIMIT} total={total} onPage={setPage} />
              <table data-testid="withdrawals" class="stack">
                <thead>
                  <tr>
                    <th>{m.user}</th>
                    <th class="money">{m.amount}</th>
                    <th>{m.pixKey}</th>
                    <th>{m.age}</th>
                    <th>{m.status}</th>
                    <th>{m.action}</th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((row) => {
                    const outcome = outcomes[row.id]
                    const now = outcome ?? row
                    return (
                      <tr key={row.id} data-id={row.id}>
                        <td data-label={m.user}>
                          <UserLink user={row.user} />
                        </td>
                        <td data-label={m.amount} class="money">{formatCents(row.amountCents)}</td>
                        <td data-label={m.pixKey}>
                          <span>{w.pixKeyType[row.pixKeyType] ?? row.pixKeyType} <small>{row.pixKey}</small></span>
                        </td>
                        <td data-label={m.age} title={formatDateTime(row.requestedAt)}>{age(row.requestedAt)}</td>
                        <td data-label={m.status} data-testid="status" data-status={now.status}>
                          <span>
                            {w.withdrawalStatus[now.status] ?? now.status}
                            {now.payoutError && <small>: {now.payoutError}</small>}
                          </span>
                        </td>
                        <td data-label={m.action}>
                          {outcome === undefined && row.status === "PENDING"
                            ? <Actions onApprove={() => act(row, "approve")} onReject={(r) => act(row, "reject", r)} />
                            : now.status === "PROCESSING"
                            ? (
                              <div class="actions">
                                <ReconcileButton onReconcile={() => reconcile(row)} />
                                {reconciled[row.id] && <small data-testid="reconcile-outcome">{reconciled[row.id]}</small>}
                              </div>
                            )
                            : reconciled[row.id]
                            ? <small data-testid="reconcile-outcome">{reconciled[row.id]}</small>
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
const reconcileOutcome = (row: Withdrawal): string => {
  const m = withdrawalsText()
  const status = peopleText().withdrawalStatus
  switch (row.status) {
    case "COMPLETED":
      return m.reconciledPaid(status.COMPLETED)
    case "FAILED":
      return m.reconciledFailed(status.FAILED, row.payoutError)
    case "PENDING":
      return m.reconciledNeverReceived(status.PENDING)
    case "PROCESSING":
      return m.reconciledStillProcessing(status.PROCESSING)
    default:
      return status[row.status] ?? row.status
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
      {withdrawalsText().reconcile}
    </button>
  )
}

const Actions = ({ onApprove, onReject }: { onApprove: () => Promise<void>; onReject: (reason: string) => Promise<void> }) => {
  const m = withdrawalsText()
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
          // The API refuses a reason with spaces around it.
          if (reason.trim() !== "") run(() => onReject(reason.trim()))
        }}
      >
        <ReasonInput value={reason} onInput={setReason} />
        <button type="submit" disabled={busy}>{m.reject}</button>
        <button type="button" class="outline secondary" onClick={() => setRejecting(false)}>{m.cancel}</button>
      </form>
    )
    : (
      <div class="actions">
        <button disabled={busy} aria-busy={busy} onClick={() => run(onApprove)}>{m.approve}</button>
        <button class="outline" disabled={busy} onClick={() => setRejecting(true)}>{m.rejectOpen}</button>
      </div>
    )
}
