/**
 * Words the people pages share (users, deposits, withdrawals, one player): statuses, ledger types, payment methods,
 * and the ban, unban and balance adjustment forms and confirmations (UserActions.tsx). English shows a status as the
 * API names it (PENDING, COMPLETED), the word the operators' docs and the API reference use; Portuguese in words.
 */
import { messages } from "../../i18n"

const depositStatusEn = {
  PENDING: "PENDING",
  CONFIRMED: "CONFIRMED",
  FAILED: "FAILED",
  EXPIRED: "EXPIRED",
  CANCELLED: "CANCELLED",
  REFUND_PENDING: "REFUND_PENDING",
  REFUNDED: "REFUNDED"
}

const withdrawalStatusEn = {
  PENDING: "PENDING",
  PROCESSING: "PROCESSING",
  COMPLETED: "COMPLETED",
  REJECTED: "REJECTED",
  CANCELLED: "CANCELLED",
  FAILED: "FAILED"
}

export type DepositStatus = keyof typeof depositStatusEn
export type WithdrawalStatus = keyof typeof withdrawalStatusEn
export const DEPOSIT_STATUSES = Object.keys(depositStatusEn) as ReadonlyArray<DepositStatus>
export const WITHDRAWAL_STATUSES = Object.keys(withdrawalStatusEn) as ReadonlyArray<WithdrawalStatus>

const transactionTypeEn = {
  DEPOSIT: "Deposit",
  WITHDRAWAL: "Withdrawal",
  WITHDRAWAL_REFUND: "Withdrawal refunded",
  CASE_OPEN: "Case opened",
  BATTLE_ENTRY: "Battle entry",
  BATTLE_REFUND: "Battle refund",
  ITEM_SELL: "Item sold",
  RAFFLE_TICKET: "Raffle ticket",
  ADMIN_ADJUSTMENT: "Adjustment by an administrator"
}
export type TransactionType = keyof typeof transactionTypeEn
export const TRANSACTION_TYPES = Object.keys(transactionTypeEn) as ReadonlyArray<TransactionType>

export const peopleText = messages(
  {
    depositStatus: depositStatusEn,
    withdrawalStatus: withdrawalStatusEn,
    transactionType: transactionTypeEn,
    method: { PIX: "PIX", CREDIT_CARD: "Credit card", CRYPTO: "Crypto" } as Record<string, string>,
    pixKeyType: { EMAIL: "E-mail", CPF: "CPF", CNPJ: "CNPJ", PHONE: "Phone", RANDOM: "Random key" } as Record<string, string>,
    role: { USER: "player", ADMIN: "administrator" } as Record<string, string>,
    /** A status filter's choice of every status. */
    everyStatus: "every status",
    on: "on",
    off: "off",
    never: "never",
    active: "active",
    banned: (at: string) => `banned ${at}`,
    reason: "Reason",
    cancel: "Cancel",
    // Ban and unban.
    banOpen: "Ban…",
    ban: "Ban",
    banTitle: (name: string) => `Ban ${name}?`,
    banBody: (name: string, idpId: string, balance: string, sessions: number) =>
      `${name} (${idpId}, balance ${balance}) can no longer sign in, and their ${sessions} active session(s) end now.`,
    reasonIs: "Reason:",
    banConfirm: (name: string) => `Ban ${name}`,
    bannedDone: (name: string, sessions: number) => `${name} banned; ${sessions} session(s) ended`,
    unban: "Unban",
    unbanTitle: (name: string) => `Unban ${name}?`,
    unbanBody: (name: string) => `${name} can sign in and play again.`,
    unbanConfirm: (name: string) => `Unban ${name}`,
    unbannedDone: (name: string) => `${name} unbanned`,
    // Balance adjustments.
    adjustOpen: "Adjust balance…",
    amount: "Amount in R$ (negative to debit)",
    amountExample: "R$ (e.g. 50.00 or -10.00)",
    adjust: "Adjust",
    adjustBy: (amount: string) => `Adjust by ${amount}`,
    creditTitle: (name: string) => `Credit ${name}?`,
    debitTitle: (name: string) => `Debit ${name}?`,
    creditBody: (amount: string, name: string, before: string, after: string) =>
      `Credit ${amount} to ${name}: balance ${before} → ${after}.`,
    debitBody: (amount: string, name: string, before: string, after: string) =>
      `Debit ${amount} from ${name}: balance ${before} → ${after}.`,
    balanceNow: (name: string, balance: string) => `${name}'s balance is now ${balance}`
  },
  {
    depositStatus: {
      PENDING: "Pendente",
      CONFIRMED: "Confirmado",
      FAILED: "Falhou",
      EXPIRED: "Expirado",
      CANCELLED: "Cancelado",
      REFUND_PENDING: "Estorno pendente",
      REFUNDED: "Estornado"
    },
    withdrawalStatus: {
      PENDING: "Pendente",
      PROCESSING: "Em processamento",
      COMPLETED: "Pago",
      REJECTED: "Rejeitado",
      CANCELLED: "Cancelado",
      FAILED: "Falhou"
    },
    transactionType: {
      DEPOSIT: "Depósito",
      WITHDRAWAL: "Saque",
      WITHDRAWAL_REFUND: "Saque devolvido",
      CASE_OPEN: "Abertura de caixa",
      BATTLE_ENTRY: "Entrada em batalha",
      BATTLE_REFUND: "Reembolso de batalha",
      ITEM_SELL: "Venda de item",
      RAFFLE_TICKET: "Bilhete de sorteio",
      ADMIN_ADJUSTMENT: "Ajuste por administrador"
    },
    method: { PIX: "PIX", CREDIT_CARD: "Cartão de crédito", CRYPTO: "Cripto" },
    pixKeyType: { EMAIL: "E-mail", CPF: "CPF", CNPJ: "CNPJ", PHONE: "Telefone", RANDOM: "Chave aleatória" },
    role: { USER: "jogador", ADMIN: "administrador" },
    everyStatus: "todos os status",
    on: "ativado",
    off: "desativado",
    never: "nunca",
    active: "ativo",
    banned: (at: string) => `banido em ${at}`,
    reason: "Motivo",
    cancel: "Cancelar",
    banOpen: "Banir…",
    ban: "Banir",
    banTitle: (name: string) => `Banir ${name}?`,
    banBody: (name: string, idpId: string, balance: string, sessions: number) =>
      `${name} (${idpId}, saldo ${balance}) não poderá mais entrar, e as sessões ativas (${sessions}) terminam agora.`,
    reasonIs: "Motivo:",
    banConfirm: (name: string) => `Banir ${name}`,
    bannedDone: (name: string, sessions: number) => `${name} banido; sessões encerradas: ${sessions}`,
    unban: "Desbanir",
    unbanTitle: (name: string) => `Desbanir ${name}?`,
    unbanBody: (name: string) => `${name} poderá entrar e jogar de novo.`,
    unbanConfirm: (name: string) => `Desbanir ${name}`,
    unbannedDone: (name: string) => `${name} desbanido`,
    adjustOpen: "Ajustar saldo…",
    amount: "Valor em R$ (negativo para debitar)",
    amountExample: "R$ (ex.: 50,00 ou -10,00)",
    adjust: "Ajustar",
    adjustBy: (amount: string) => `Ajustar em ${amount}`,
    creditTitle: (name: string) => `Creditar na conta de ${name}?`,
    debitTitle: (name: string) => `Debitar da conta de ${name}?`,
    creditBody: (amount: string, name: string, before: string, after: string) =>
      `Creditar ${amount} a ${name}: saldo ${before} → ${after}.`,
    debitBody: (amount: string, name: string, before: string, after: string) =>
      `Debitar ${amount} de ${name}: saldo ${before} → ${after}.`,
    balanceNow: (name: string, balance: string) => `O saldo de ${name} agora é ${balance}`
  }
)
