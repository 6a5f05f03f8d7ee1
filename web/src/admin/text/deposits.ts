/** The deposits list (Deposits.tsx). */
import { messages } from "../../i18n"

export const depositsText = messages(
  {
    title: "Deposits",
    status: "Status",
    refresh: "Refresh",
    none: (status: string) => `No deposits: ${status}.`,
    user: "User",
    amount: "Amount",
    fee: "Fee",
    method: "Method",
    created: "Created",
    confirm: "Confirm",
    confirmTitle: (amount: string, name: string) => `Credit ${amount} to ${name}?`,
    confirmBody: (name: string, method: string, amount: string) =>
      `Confirming marks ${name}'s ${method} deposit of ${amount} as paid and credits it to their balance, without ` +
      "the gateway's word. Do it only with proof of payment.",
    confirmButton: (amount: string) => `Confirm ${amount}`,
    confirmed: (name: string, amount: string) => `Confirmed ${name}'s deposit of ${amount}`
  },
  {
    title: "Depósitos",
    status: "Status",
    refresh: "Atualizar",
    none: (status: string) => `Nenhum depósito: ${status}.`,
    user: "Usuário",
    amount: "Valor",
    fee: "Taxa",
    method: "Método",
    created: "Criado em",
    confirm: "Confirmar",
    confirmTitle: (amount: string, name: string) => `Creditar ${amount} a ${name}?`,
    confirmBody: (name: string, method: string, amount: string) =>
      `Confirmar marca o depósito ${method} de ${amount} de ${name} como pago e o credita no saldo, sem a ` +
      "confirmação do gateway. Faça isso só com comprovante de pagamento.",
    confirmButton: (amount: string) => `Confirmar ${amount}`,
    confirmed: (name: string, amount: string) => `Depósito de ${amount} de ${name} confirmado`
  }
)
