/** The withdrawals queue (Withdrawals.tsx). */
import { messages } from "../../i18n"

export const withdrawalsText = messages(
  {
    title: "Withdrawals",
    status: "Status",
    refresh: "Refresh",
    processingHint: (n: number, processing: string) => `${n} payout(s) ${processing} at the gateway.`,
    showThem: "Show them",
    queueEmpty: "The queue is empty.",
    none: "None.",
    user: "User",
    amount: "Amount",
    pixKey: "PIX key",
    age: "Age",
    action: "Action",
    approve: "Approve",
    approveTitle: (amount: string, name: string) => `Pay ${amount} to ${name}?`,
    approveBody: (amount: string, name: string, keyType: string, key: string) =>
      `Approving sends ${amount} to ${name} by PIX (${keyType} ${key}) now. A payout cannot be called back.`,
    approveConfirm: (amount: string) => `Approve ${amount}`,
    rejectOpen: "Reject…",
    reject: "Reject",
    cancel: "Cancel",
    reconcile: "Reconcile",
    outcome: (name: string, amount: string, what: string) => `${name}'s withdrawal of ${amount}: ${what}`,
    // What a reconciliation found (docs/rules.md#withdrawal-reconcile); each names the status it left.
    reconciledPaid: (completed: string) => `the gateway paid it: ${completed}`,
    reconciledFailed: (failed: string, error: string | null) =>
      `the gateway reports it failed: ${failed}, the amount returned to the balance${error ? ` (${error})` : ""}`,
    reconciledNeverReceived: (pending: string) =>
      `the gateway never received it: back to ${pending}, to approve again or reject`,
    reconciledStillProcessing: (processing: string) =>
      `still ${processing}: the gateway has not settled it yet (or received it less than 2 minutes ago); try again later`
  },
  {
    title: "Saques",
    status: "Status",
    refresh: "Atualizar",
    processingHint: (n: number, processing: string) => `Pagamentos no gateway com status ${processing}: ${n}.`,
    showThem: "Mostrar",
    queueEmpty: "A fila está vazia.",
    none: "Nenhum.",
    user: "Usuário",
    amount: "Valor",
    pixKey: "Chave PIX",
    age: "Há",
    action: "Ação",
    approve: "Aprovar",
    approveTitle: (amount: string, name: string) => `Pagar ${amount} a ${name}?`,
    approveBody: (amount: string, name: string, keyType: string, key: string) =>
      `Aprovar envia ${amount} a ${name} por PIX (${keyType} ${key}) agora. Um pagamento não pode ser desfeito.`,
    approveConfirm: (amount: string) => `Aprovar ${amount}`,
    rejectOpen: "Rejeitar…",
    reject: "Rejeitar",
    cancel: "Cancelar",
    reconcile: "Conciliar",
    outcome: (name: string, amount: string, what: string) => `Saque de ${amount} de ${name}: ${what}`,
    reconciledPaid: (completed: string) => `o gateway pagou: ${completed}`,
    reconciledFailed: (failed: string, error: string | null) =>
      `o gateway informa que falhou: ${failed}, o valor voltou ao saldo${error ? ` (${error})` : ""}`,
    reconciledNeverReceived: (pending: string) =>
      `o gateway nunca o recebeu: de volta a ${pending}, para aprovar de novo ou rejeitar`,
    reconciledStillProcessing: (processing: string) =>
      `ainda ${processing}: o gateway não o liquidou (ou o recebeu há menos de 2 minutos); tente mais tarde`
  }
)
