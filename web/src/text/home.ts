/** The start page's texts (web/src/Home.tsx). */
import { messages } from "../i18n"

export const home = messages(
  {
    documentTitle: "Game Platform",
    title: "Game Platform",
    about: "The backend of a gaming platform for the Brazilian market: provably fair case openings, upgrades, " +
      "battles, raffles, PIX deposits and withdrawals. This page is its front door; players use the platform " +
      "through its API.",
    signInFirst: "Sign in to see your balance; administrators also get the console.",
    signIn: "Sign in",
    signedInAs: "Signed in as",
    administrator: " (administrator)",
    balance: "Balance:",
    openConsole: "Open the console",
    apiReference: "API reference",
    openApi: "OpenAPI 3.1",
    signOut: "Sign out"
  },
  {
    documentTitle: "Plataforma de Jogos",
    title: "Plataforma de Jogos",
    about: "O backend de uma plataforma de jogos para o mercado brasileiro: aberturas de caixas comprovadamente " +
      "justas, upgrades, batalhas, rifas, depósitos e saques por PIX. Esta página é a porta de entrada; os " +
      "jogadores usam a plataforma pela API.",
    signInFirst: "Entre para ver seu saldo; administradores também têm acesso ao console.",
    signIn: "Entrar",
    signedInAs: "Conectado como",
    administrator: " (administrador)",
    balance: "Saldo:",
    openConsole: "Abrir o console",
    apiReference: "Referência da API",
    openApi: "OpenAPI 3.1",
    signOut: "Sair"
  }
)
