import type { ComponentChildren } from "preact"
import { useState } from "preact/hooks"
import { LOCALES, locale, numberFormat } from "./i18n"
import { setLocale } from "./useLocale"
import { common, LANGUAGE_NAMES } from "./text/common"
import type { Loaded } from "./useLoad"

/** An API error, as the API words it. */
export const ErrorNote = ({ text }: { text: string | undefined }) =>
  text ? <p class="note error" role="alert">{text}</p> : null

export const SuccessNote = ({ text }: { text: string | undefined }) =>
  text ? <p class="note ok" role="status">{text}</p> : null

/** Shows the value once loaded, a busy marker before, the error if it failed. */
export const Show = <A,>({ loaded, children }: { loaded: Loaded<A>; children: (value: A) => ComponentChildren }) =>
  loaded.state === "loading"
    ? <p aria-busy="true">{common().loading}</p>
    : loaded.state === "failed"
    ? <ErrorNote text={loaded.error} />
    : <>{children(loaded.value)}</>

/** Page controls of a paged list (docs/rules.md#pagination): which rows are shown of how many; first, previous, next and last. */
export const Pager = (
  { page, limit, total, onPage }: { page: number; limit: number; total: number; onPage: (page: number) => void }
) => {
  const m = common()
  const n = (value: number) => numberFormat().format(value)
  const pages = Math.max(1, Math.ceil(total / limit))
  if (total <= limit && page === 1) return <p><small data-testid="pager-summary">{m.inAll(n(total))}</small></p>
  const first = total === 0 ? 0 : (page - 1) * limit + 1
  const last = Math.min(total, page * limit)
  return (
    <nav class="pager" aria-label={m.pages} data-testid="pager">
      <button class="outline secondary" disabled={page <= 1} onClick={() => onPage(1)} aria-label={m.firstPage} title={m.firstPage}>
        {m.first}
      </button>
      <button class="outline secondary" disabled={page <= 1} onClick={() => onPage(page - 1)}>{m.previous}</button>
      <small data-testid="pager-summary">{m.range(n(first), n(last), n(total), n(page), n(pages))}</small>
      <button class="outline secondary" disabled={page >= pages} onClick={() => onPage(page + 1)}>{m.next}</button>
      <button class="outline secondary" disabled={page >= pages} onClick={() => onPage(pages)} aria-label={m.lastPage} title={m.lastPage}>
        {m.last}
      </button>
    </nav>
  )
}

export interface Question {
  readonly title: string
  readonly body: ComponentChildren
  /** The confirming button's text, e.g. "Approve R$ 50,00". */
  readonly confirm: string
}

/**
 * A confirmation before an action that moves money or locks someone out: `ask` shows the question in a dialog
 * and resolves true when confirmed, false when cancelled. Render `dialog` once in the page.
 */
export const useConfirm = () => {
  const [open, setOpen] = useState<{ question: Question; answer: (yes: boolean) => void } | undefined>(undefined)
  const ask = (question: Question) => new Promise<boolean>((answer) => setOpen({ question, answer }))
  const close = (yes: boolean) => {
    open?.answer(yes)
    setOpen(undefined)
  }
  const dialog = open === undefined ? null : (
    <dialog open aria-labelledby="confirm-title" data-testid="confirm" onKeyDown={(e) => e.key === "Escape" && close(false)}>
      <article>
        <h2 id="confirm-title">{open.question.title}</h2>
        <div>{open.question.body}</div>
        <footer>
          <button class="secondary" onClick={() => close(false)}>{common().cancel}</button>
          <button autoFocus onClick={() => close(true)}>{open.question.confirm}</button>
        </footer>
      </article>
    </dialog>
  )
  return [dialog, ask] as const
}

/** The language switch: the other language, named in itself; the choice is remembered (i18n.ts). */
export const LanguageSwitch = () => {
  const other = LOCALES.find((l) => l !== locale())!
  return (
    <button
      type="button"
      class="outline secondary language"
      lang={other}
      aria-label={`${common().language}: ${LANGUAGE_NAMES[other]}`}
      data-testid="language-switch"
      data-locale={other}
      onClick={() => setLocale(other)}
    >
      {LANGUAGE_NAMES[other]}
    </button>
  )
}
