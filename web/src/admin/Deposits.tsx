import { useState } from "preact/hooks"
import { api, errorText } from "../api"
import { formatCents, formatDateTime } from "../money"
import { ErrorNote, Pager, Show, SuccessNote, useConfirm } from "../ui"
import { useLoad } from "../useLoad"
import "./catalog.css"
import type { PageProps } from "./Console"
import { UserLink } from "./nav"

interface Deposit {
  readonly id: string
  readonly amountCents: number | string
  readonly feeCents: number
  readonly method: string
  readonly status: string
  readonly createdAt: string
  readonly user: { id: string; username: string }
}

// REFUND_PENDING and REFUNDED: deposits paid by a third party under JURISDICTION=BR (docs/rules.md#deposit-third-party).
const LIMIT = 50

const STATUSES = ["PENDING", "CONFIRMED", "FAILED", "EXPIRED", "CANCELLED", "REFUND_PENDING", "REFUNDED"] as const

export const Deposits = ({ twoFactorCode }: PageProps) => {
  const [status, setStatus] = useState<string>("PENDING")
  const [page, setPage] = useState(1)
  const [deposits, reload] = useLoad(
    () =>
      api<{ deposits: ReadonlyArray<Deposit>; total: number }>(
        `/admin/deposits?status=${status}&page=${page}&limit=${LIMIT}`
      ),
    [status, page]
  )
  const [dialog, ask] = useConfirm()
  const [confirmed, setConfirmed] = useState<ReadonlySet<string>>(new Set())
  const [message, setMessage] = useState<{ ok?: string; error?: string }>({})

  const confirm = async (d: Deposit) => {
    setMessage({})
    const yes = await ask({
      title: `Credit ${formatCents(d.amountCents)} to ${d.user.username}?`,
      body: (
        <p>
          Confirming marks <strong>{d.user.username}</strong>'s {d.method} deposit of{" "}
          <strong>{formatCents(d.amountCents)}</strong> as paid and credits it to their balance, without the gateway's
          word. Do it only with proof of payment.
        </p>
      ),
      confirm: `Confirm ${formatCents(d.amountCents)}`
    })
    if (!yes) return
    try {
      await api(`/admin/deposits/${d.id}/confirm`, { method: "POST", twoFactorCode })
      setConfirmed((now) => new Set([...now, d.id]))
      setMessage({ ok: `Confirmed ${d.user.username}'s deposit of ${formatCents(d.amountCents)}` })
    } catch (error) {
      setMessage({ error: errorText(error) })
    }
  }

  return (
    <>
      <div class="toolbar">
        <h1>Deposits</h1>
        <select
          name="status"
          aria-label="Status"
          value={status}
          onChange={(e) => (setConfirmed(new Set()), setPage(1), setStatus(e.currentTarget.value))}
        >
          {STATUSES.map((s) => <option key={s} value={s}>{s}</option>)}
        </select>
        <button class="outline secondary" onClick={() => (setConfirmed(new Set()), reload())}>Refresh</button>
      </div>
      {dialog}
      <SuccessNote text={message.ok} />
      <ErrorNote text={message.error} />
      <Show loaded={deposits}>
        {({ deposits, total }) =>
          deposits.length === 0 ? <p>No {status.toLowerCase()} deposits.</p> : (
            <div class="overflow-auto">
              <Pager page={page} limit={LIMIT} total={total} onPage={setPage} />
              <table data-testid="deposits" class="stack">
                <thead>
                  <tr>
                    <th>User</th>
                    <th class="money">Amount</th>
                    <th class="money">Fee</th>
                    <th>Method</th>
                    <th>Created</th>
                    <th>Status</th>
                    <th />
                  </tr>
                </thead>
                <tbody>
                  {deposits.map((d) => (
                    <tr key={d.id} data-id={d.id}>
                      <td data-label="User">
                        <UserLink user={d.user} />
                      </td>
                      <td data-label="Amount" class="money">{formatCents(d.amountCents)}</td>
                      <td data-label="Fee" class="money">{formatCents(d.feeCents)}</td>
                      <td data-label="Method">{d.method}</td>
                      <td data-label="Created">{formatDateTime(d.createdAt)}</td>
                      <td data-label="Status" data-testid="status">{confirmed.has(d.id) ? "CONFIRMED" : d.status}</td>
                      <td data-label="">
                        {d.status === "PENDING" && !confirmed.has(d.id) && <ConfirmButton onConfirm={() => confirm(d)} />}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
      </Show>
    </>
  )
}

const ConfirmButton = ({ onConfirm }: { onConfirm: () => Promise<void> }) => {
  const [busy, setBusy] = useState(false)
  return (
    <button disabled={busy} aria-busy={busy} onClick={() => (setBusy(true), onConfirm().finally(() => setBusy(false)))}>
      Confirm
    </button>
  )
}
