/** The texts every page shares: the busy marker, the pager, the confirmation dialog, the language switch. */
import { messages } from "../i18n"

export const common = messages(
  {
    loading: "Loading…",
    first: "«",
    firstPage: "First page",
    previous: "‹ Previous",
    next: "Next ›",
    last: "»",
    lastPage: "Last page",
    pages: "Pages",
    inAll: (total: string) => `${total} in all`,
    range: (first: string, last: string, total: string, page: string, pages: string) =>
      `${first}–${last} of ${total} · page ${page} of ${pages}`,
    cancel: "Cancel",
    language: "Language",
    /** The API cannot be reached at all (no answer to show as the API words it). */
    unreachable: "The service cannot be reached"
  },
  {
    loading: "Carregando…",
    first: "«",
    firstPage: "Primeira página",
    previous: "‹ Anterior",
    next: "Próxima ›",
    last: "»",
    lastPage: "Última página",
    pages: "Páginas",
    inAll: (total: string) => `${total} no total`,
    range: (first: string, last: string, total: string, page: string, pages: string) =>
      `${first}–${last} de ${total} · página ${page} de ${pages}`,
    cancel: "Cancelar",
    language: "Idioma",
    unreachable: "Não foi possível conectar ao serviço"
  }
)

/** Each language by its own name, as the switch offers it. */
export const LANGUAGE_NAMES = { "pt-BR": "Português", en: "English" } as const
