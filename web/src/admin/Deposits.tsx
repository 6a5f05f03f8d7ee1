import { useState } from "preact/hooks"
import { api, errorText } from "../api"
import { formatCents, formatDateTime } from "../money"
import { ErrorNote, Pager, Show, SuccessNote, useConfirm } from "../ui"
import { useLoad } from "../useLoad"
import "./catalog.css"
import type { PageProps } from "./Console"
import { UserLink } from "./nav"
import { depositsText } from "./text/deposits"
import { DEPOSIT_STATUSES, type DepositStatus, peopleText } from "./text/people"
import type { Outcome } from "./UserActions"

interface Deposit {
  readonly id: string
  readonly amountCents: number | string
  readonly feeCents: number
  readonly method: string
  readonly status: DepositStatus
  readonly createdAt: string
  readonly user: { id: string; username: string }
}

// REFUND_PENDING and REFUNDED: deposits paid by a third party under JURISDICTION=BR (docs/rules.md#deposit-third-party).
const LIMIT = 50

/** `/admin/deposits`: deposits of one status (PENDING first) or of every status, paged; a PENDING one confirmed by hand. */
export const Deposits = ({ twoFactorCode }: PageProps) => {
  const m = depositsText()
  const w = peopleText()
  const [status, setStatus] = useState<DepositStatus | "">("PENDING")
  const [page, setPage] = useState(1)
  const [deposits, reload] = useLoad(
    () =>
      api<{ deposits: ReadonlyArray<Deposit>; total: number }>(
        `/admin/deposits?page=${page}&limit=${LIMIT}${status === "" ? "" : `&status=${status}`}`
      ),
    [status, page]
  )
  const [dialog, ask] = useConfirm()
  const [confirmed, setConfirmed] = useState<ReadonlySet<string>>(new Set())
  const [message, setMessage] = useState<Outcome>({})

  const confirm = async (d: Deposit) => {
    setMessage({})
    const amount = formatCents(d.amountCents)
    const yes = await ask({
      title: m.confirmTitle(amount, d.user.username),
      body: <p>{m.confirmBody(d.user.username, w.method[d.method] ?? d.method, amount)}</p>,
      confirm: m.confirmButton(amount)
    })
    if (!yes) return
    try {
      await api(`/admin/deposits/${d.id}/confirm`, { method: "POST", twoFactorCode })
      setConfirmed((now) => new Set([...now, d.id]))
      setMessage({ ok: m.confirmed(d.user.username, amount) })
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
          onChange={(e) => (setConfirmed(new Set()), setPage(1), setStatus(e.currentTarget.value as DepositStatus | ""))}
        >
          {DEPOSIT_STATUSES.map((s) => <option key={s} value={s}>{w.depositStatus[s]}</option>)}
          <option value="">{w.everyStatus}</option>
        </select>
        <button class="outline secondary" onClick={() => (setConfirmed(new Set()), reload())}>{m.refresh}</button>
      </div>
      {dialog}
      <SuccessNote text={message.ok} />
      <ErrorNote text={message.error} />
      <Show loaded={deposits}>
        {({ deposits, total }) =>
          deposits.length === 0 ? <p>{m.none(status === "" ? w.everyStatus : w.depositStatus[status])}</p> : (
            <div class="overflow-auto">
              <Pager page={page} limit={LIMIT} total={total} onPage={setPage} />
              <table data-testid="deposits" class="stack">
                <thead>
                  <tr>
                    <th>{m.user}</th>
                    <th class="money">{m.amount}</th>
                    <th class="money">{m.fee}</th>
                    <th>{m.method}</th>
                    <th>{m.created}</th>
                    <th>{m.status}</th>
                    <th />
                  </tr>
                </thead>
                <tbody>
                  {deposits.map((d) => {
                    const shown: DepositStatus = confirmed.has(d.id) ? "CONFIRMED" : d.status
                    return (
                      <tr key={d.id} data-id={d.id}>
                        <td data-label={m.user}>
                          <UserLink user={d.user} />
                        </td>
                        <td data-label={m.amount} class="money">{formatCents(d.amountCents)}</td>
                        <td data-label={m.fee} class="money">{formatCents(d.feeCents)}</td>
                        <td data-label={m.method}>{w.method[d.method] ?? d.method}</td>
                        <td data-label={m.created}>{formatDateTime(d.createdAt)}</td>
                        <td data-label={m.status} data-testid="status" data-status={shown}>{w.depositStatus[shown] ?? shown}</td>
                        <td data-label="">
                          {d.status === "PENDING" && !confirmed.has(d.id) && <ConfirmButton onConfirm={() => confirm(d)} />}
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

const ConfirmButton = ({ onConfirm }: { onConfirm: () => Promise<void> }) => {
  const [busy, setBusy] = useState(false)
  return (
    <button disabled={busy} aria-busy={busy} onClick={() => (setBusy(true), onConfirm().finally(() => setBusy(false)))}>
      {depositsText().confirm}
    </button>
  )
}
