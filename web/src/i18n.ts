/**
 * The pages' two languages: Brazilian Portuguese and English. The first visit follows the browser's
 * languages (any `pt` -> pt-BR, else English); the switch remembers the choice in localStorage. Every text
 * lives in a `text` module beside its page (`messages(en, ptBR)`), which the end-to-end tests import too, so a
 * test finds a button by the same words the page shows. Numbers, money and dates follow the language.
 * This module is plain TypeScript (no Preact, no document): the tests' type check reads it too. The switch
 * itself, which re-renders the pages, is web/src/useLocale.ts.
 */
export const LOCALES = ["pt-BR", "en"] as const
export type Locale = (typeof LOCALES)[number]

export const STORAGE_KEY = "locale"

const isLocale = (value: unknown): value is Locale => LOCALES.includes(value as Locale)

/** The remembered choice, else the browser's first language we speak, else English. */
const initial = (): Locale => {
  const stored = typeof localStorage === "undefined" ? null : localStorage.getItem(STORAGE_KEY)
  if (isLocale(stored)) return stored
  const preferred = typeof navigator === "undefined" ? [] : navigator.languages ?? [navigator.language]
  for (const language of preferred) {
    if (/^pt\b/i.test(language)) return "pt-BR"
    if (/^en\b/i.test(language)) return "en"
  }
  return "en"
}

let current: Locale = initial()

export const locale = (): Locale => current

/** Makes `next` the language every text and formatter reads from now on (see useLocale.ts's setLocale). */
export const useLanguage = (next: Locale) => {
  current = next
}

/**
 * One page's texts in both languages: call the result during render for the current language's table.
 * The Portuguese table must have every entry of the English one (the type says so).
 */
export const messages = <M>(en: M, ptBR: NoInfer<M>) => {
  const tables: Record<Locale, M> = { en, "pt-BR": ptBR }
  const text = () => tables[current]
  text.in = (language: Locale) => tables[language]
  return text
}

/** A formatter (or anything else) made by `make` once per language; the current language's. */
export const perLocale = <F>(make: (locale: Locale) => F) => {
  const made = new Map<Locale, F>()
  return () => {
    let formatter = made.get(current)
    if (formatter === undefined) made.set(current, formatter = make(current))
    return formatter
  }
}

export const numberFormat = perLocale((l) => new Intl.NumberFormat(l))
export const currencyFormat = perLocale((l) => new Intl.NumberFormat(l, { style: "currency", currency: "BRL" }))
export const percentFormat = perLocale((l) =>
  new Intl.NumberFormat(l, { style: "percent", minimumFractionDigits: 2, maximumFractionDigits: 2 })
)
export const dateTimeFormat = perLocale((l) => new Intl.DateTimeFormat(l, { dateStyle: "short", timeStyle: "short" }))
export const dateFormat = perLocale((l) => new Intl.DateTimeFormat(l, { dateStyle: "short" }))
