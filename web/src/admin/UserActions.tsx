import { useState } from "preact/hooks"
import { api, errorText } from "../api"
import { formatCents, parseReais } from "../money"
import type { Question } from "../ui"
import type { PageProps } from "./Console"
import { peopleText } from "./text/people"

/** Whom the actions are about, as the users list and the player page both know them. */
export interface Person {
  readonly id: string
  readonly username: string
  readonly idpId: string
  readonly balanceCents: number | string
  readonly activeSessions: number
  readonly banned: boolean
}

/** What an action ended with: a success in words, or the API's error as it words it. */
export type Outcome = { readonly ok?: string; readonly error?: string }

/**
 * Ban (with a reason), unban and adjust the balance (a signed amount in R$ and a reason) of one person, each after a
 * confirmation naming them (and the amount, and the balance before and after); the administrator's 2FA code goes
 * with each request (docs/rules.md#admin-step-up). `ask` is the page's confirmation (useConfirm); `onDone` hears
 * every outcome, cleared ({}) when an action starts, and reloads what the page shows from the API.
 */
export const UserActions = (
  { person, admin, twoFactorCode, ask, onDone }: PageProps & {
    person: Person
    ask: (question: Question) => Promise<boolean>
    onDone: (outcome: Outcome) => void
  }
) => {
  const m = peopleText()
  const [editing, setEditing] = useState<"ban" | "adjust" | undefined>(undefined)
  const name = person.username

  /** Asks, then runs `action`; a refusal is shown and leaves the form open to correct it. */
  const run = async (question: Question, action: () => Promise<string>) => {
    onDone({})
    if (!(await ask(question))) return
    try {
      const ok = await action()
      setEditing(undefined)
      onDone({ ok })
    } catch (error) {
      onDone({ error: errorText(error) })
    }
  }

  const ban = (reason: string) =>
    run(
      {
        title: m.banTitle(name),
        body: (
          <>
            <p>{m.banBody(name, person.idpId, formatCents(person.balanceCents), person.activeSessions)}</p>
            <p>
              {m.reasonIs} <em>{reason}</em>
            </p>
          </>
        ),
        confirm: m.banConfirm(name)
      },
      async () => {
        const r = await api<{ sessionsRevoked: number }>(`/admin/users/${person.id}/ban`, {
          method: "POST",
          body: { reason },
          twoFactorCode
        })
        return m.bannedDone(name, r.sessionsRevoked)
      }
    )

  const unban = () =>
    run({ title: m.unbanTitle(name), body: <p>{m.unbanBody(name)}</p>, confirm: m.unbanConfirm(name) }, async () => {
      await api(`/admin/users/${person.id}/unban`, { method: "POST", twoFactorCode })
      return m.unbannedDone(name)
    })

  const adjust = (cents: bigint, reason: string) => {
    const credit = cents > 0n
    const before = BigInt(person.balanceCents)
    const figures = [formatCents(credit ? cents : -cents), name, formatCents(before), formatCents(before + cents)] as const
    return run(
      {
        title: credit ? m.creditTitle(name) : m.debitTitle(name),
        body: (
          <>
            <p>{credit ? m.creditBody(...figures) : m.debitBody(...figures)}</p>
            <p>
              {m.reasonIs} <em>{reason}</em>
            </p>
          </>
        ),
        confirm: m.adjustBy(formatCents(cents))
      },
      async () => {
        const r = await api<{ balanceCents: number }>(`/admin/users/${person.id}/adjust-balance`, {
          method: "POST",
          body: { amountCents: Number(cents), reason },
          twoFactorCode
        })
        return m.balanceNow(name, formatCents(r.balanceCents))
      }
    )
  }

  if (editing === "ban") return <ReasonForm label={m.ban} onSubmit={ban} onCancel={() => setEditing(undefined)} />
  if (editing === "adjust") return <AdjustForm onSubmit={adjust} onCancel={() => setEditing(undefined)} />
  return (
    <div class="actions">
      {person.banned
        ? <button class="outline" onClick={unban}>{m.unban}</button>
        : person.id !== admin.id && <button class="outline" onClick={() => setEditing("ban")}>{m.banOpen}</button>}
      <button class="outline secondary" onClick={() => setEditing("adjust")}>{m.adjustOpen}</button>
    </div>
  )
}

/** The reason as the API takes it: without the spaces around it (it refuses them). */
export const ReasonInput = ({ value, onInput }: { value: string; onInput: (value: string) => void }) => {
  const m = peopleText()
  return (
    <input
      name="reason"
      aria-label={m.reason}
      placeholder={m.reason}
      required
      maxLength={500}
      value={value}
      onInput={(e) => onInput(e.currentTarget.value)}
    />
  )
}

const ReasonForm = (
  { label, onSubmit, onCancel }: { label: string; onSubmit: (reason: string) => Promise<void>; onCancel: () => void }
) => {
  const [reason, setReason] = useState("")
  const [busy, setBusy] = useState(false)
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        if (reason.trim() === "") return
        setBusy(true)
        onSubmit(reason.trim()).finally(() => setBusy(false))
      }}
    >
      <ReasonInput value={reason} onInput={setReason} />
      <button type="submit" disabled={busy}>{label}</button>
      <button type="button" class="outline secondary" onClick={onCancel}>{peopleText().cancel}</button>
    </form>
  )
}

const AdjustForm = (
  { onSubmit, onCancel }: { onSubmit: (cents: bigint, reason: string) => Promise<void>; onCancel: () => void }
) => {
  const m = peopleText()
  const [amount, setAmount] = useState("")
  const [reason, setReason] = useState("")
  const [busy, setBusy] = useState(false)
  const cents = parseReais(amount)
  const invalid = amount.trim() !== "" && (cents === undefined || cents === 0n)
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        if (cents === undefined || cents === 0n || reason.trim() === "") return
        setBusy(true)
        onSubmit(cents, reason.trim()).finally(() => setBusy(false))
      }}
    >
      <input
        name="amount"
        aria-label={m.amount}
        placeholder={m.amountExample}
        required
        aria-invalid={invalid ? true : undefined}
        value={amount}
        onInput={(e) => setAmount(e.currentTarget.value)}
      />
      <ReasonInput value={reason} onInput={setReason} />
      <button type="submit" disabled={busy || invalid}>
        {cents !== undefined && cents !== 0n ? m.adjustBy(formatCents(cents)) : m.adjust}
      </button>
      <button type="button" class="outline secondary" onClick={onCancel}>{m.cancel}</button>
    </form>
  )
}
