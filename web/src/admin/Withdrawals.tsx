import { useState } from "preact/hooks"
import { api, errorText } from "../api"
import { age, formatCents, formatDateTime } from "../money"
import { ErrorNote, Show, SuccessNote } from "../ui"
import { useLoad } from "../useLoad"
import type { PageProps } from "./Console"

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
}

/** The queue: PENDING and PROCESSING, oldest first; approve (payout) or reject with a reason. */
const loadQueue = async () => {
  const [pending, processing] = await Promise.all([
    api<Page>("/admin/withdrawals?status=PENDING&limit=100"),
    api<Page>("/admin/withdrawals?status=PROCESSING&limit=100")
  ])
  return [...pending.withdrawals, ...processing.withdrawals].sort((a, b) => a.requestedAt.localeCompare(b.requestedAt))
}

export const Withdrawals = ({ twoFactorCode }: PageProps) => {
  const [queue, reload] = useLoad(loadQueue, [])
  /** What happened to rows acted on here, shown in place of their actions until the next reload. */
  const [outcomes, setOutcomes] = useState<Record<string, Withdrawal>>({})
  const [message, setMessage] = useState<{ ok?: string; error?: string }>({})

  const act = async (w: Withdrawal, action: "approve" | "reject", reason?: string) => {
    setMessage({})
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

  return (
    <>
      <div class="toolbar">
        <h1>Withdrawals</h1>
        <button class="outline secondary" onClick={() => (setOutcomes({}), reload())}>Refresh</button>
      </div>
      <SuccessNote text={message.ok} />
      <ErrorNote text={message.error} />
      <Show loaded={queue}>
        {(rows) =>
          rows.length === 0 ? <p>The queue is empty.</p> : (
            <div class="overflow-auto">
              <table data-testid="withdrawals">
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
                        <td>{w.user.username}</td>
                        <td class="money">{formatCents(w.amountCents)}</td>
                        <td>
                          {w.pixKeyType} <small>{w.pixKey}</small>
                        </td>
                        <td title={formatDateTime(w.requestedAt)}>{age(w.requestedAt)}</td>
                        <td data-testid="status">
                          {(outcome ?? w).status}
                          {(outcome ?? w).payoutError && <small>: {(outcome ?? w).payoutError}</small>}
                        </td>
                        <td>
                          {outcome === undefined && w.status === "PENDING"
                            ? <Actions onApprove={() => act(w, "approve")} onReject={(r) => act(w, "reject", r)} />
                            : outcome?.rejectionReason ?? ""}
                        </td>
                      </tr>
                    )
                  })}
                </tbody>
              </table>
            </div>
          )}
      </Show>
    </>
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
