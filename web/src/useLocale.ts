/** The language switch (web/src/i18n.ts holds the language): remembered, on <html lang>, every page re-rendered. */
import { useEffect, useState } from "preact/hooks"
import { locale, type Locale, STORAGE_KEY, useLanguage } from "./i18n"

const listeners = new Set<(locale: Locale) => void>()

/** Switches every page to `next` and remembers it for the next visit. */
export const setLocale = (next: Locale) => {
  useLanguage(next)
  localStorage.setItem(STORAGE_KEY, next)
  document.documentElement.lang = next
  for (const listener of listeners) listener(next)
}

/** The current language, re-rendering the component when it switches. Used once at the root. */
export const useLocale = (): Locale => {
  const [value, setValue] = useState(locale())
  useEffect(() => {
    document.documentElement.lang = locale()
    listeners.add(setValue)
    return () => void listeners.delete(setValue)
  }, [])
  return value
}
