/** The console's shell: navigation, the sign-in and refusal pages, the toolbar, the document titles. */
import { messages } from "../../i18n"

export const consoleText = messages(
  {
    console: "Console",
    sections: {
      dashboard: "Dashboard",
      withdrawals: "Withdrawals",
      deposits: "Deposits",
      users: "Users",
      catalog: "Catalog",
      audit: "Audit log"
    },
    player: "Player",
    notFound: "Not found",
    noSuchPage: "No such page. Choose a section above.",
    signedOutText: "The console is for administrators. Sign in first.",
    signIn: "Sign in",
    adminsOnly: "Administrators only",
    notAdmin: (name: string) =>
      `You are signed in as ${name}, who is not an administrator. The console is for the people who run the platform.`,
    backHome: "Back to the start page",
    administrator: "administrator",
    twoFactorCode: "2FA code for protected actions",
    navigation: "Sections"
  },
  {
    console: "Console",
    sections: {
      dashboard: "Painel",
      withdrawals: "Saques",
      deposits: "Depósitos",
      users: "Usuários",
      catalog: "Catálogo",
      audit: "Registro de auditoria"
    },
    player: "Jogador",
    notFound: "Página não encontrada",
    noSuchPage: "Esta página não existe. Escolha uma seção acima.",
    signedOutText: "O console é para administradores. Entre primeiro.",
    signIn: "Entrar",
    adminsOnly: "Somente administradores",
    notAdmin: (name: string) =>
      `Você entrou como ${name}, que não é administrador. O console é para quem opera a plataforma.`,
    backHome: "Voltar à página inicial",
    administrator: "administrador",
    twoFactorCode: "Código 2FA para ações protegidas",
    navigation: "Seções"
  }
)
