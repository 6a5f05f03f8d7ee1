/** The users list (Users.tsx). */
import { messages } from "../../i18n"

export const usersText = messages(
  {
    title: "Users",
    searchLabel: "Search users",
    searchPlaceholder: "Username or idpId",
    search: "Search",
    none: "No users found.",
    user: "User",
    role: "Role",
    balance: "Balance",
    twoFactor: "2FA",
    sessions: "Sessions",
    lastActive: "Last active",
    status: "Status",
    actions: "Actions"
  },
  {
    title: "Usuários",
    searchLabel: "Buscar usuários",
    searchPlaceholder: "Nome de usuário ou idpId",
    search: "Buscar",
    none: "Nenhum usuário encontrado.",
    user: "Usuário",
    role: "Papel",
    balance: "Saldo",
    twoFactor: "2FA",
    sessions: "Sessões",
    lastActive: "Última atividade",
    status: "Situação",
    actions: "Ações"
  }
)
