/** The dashboard's texts (web/src/admin/Dashboard.tsx, figures.ts): what each figure counts, in both languages. */
import { messages } from "../../i18n"

/** A card's words: its label, what it counts in a few words (under the value) and at length (its tooltip). */
interface CardText {
  readonly label: string
  readonly hint: string
  readonly title: string
}

export const dashboard = messages(
  {
    title: "Dashboard",
    zone: { daysIn: "Days in", today: (day: string) => ` · today is ${day} there, from midnight to midnight` },
    notApplicable: "n/a",
    cards: {
      "users.total": {
        label: "Users",
        hint: "all accounts, administrators included",
        title: "Every account there is, players and administrators, banned or not."
      },
      "users.activeToday": {
        label: "Active today",
        hint: "signed-in users seen today",
        title: "Distinct users who made at least one signed-in request today."
      },
      "users.newToday": { label: "New today", hint: "accounts created today", title: "Accounts created today." },
      "users.growth": {
        label: "Active vs yesterday",
        hint: "change in active users since yesterday",
        title: "Active users today against active users yesterday, in percent. With nobody active yesterday there " +
          "is no base: n/a. The API answers 0 % both for no change and for nobody yesterday; the console shows n/a " +
          "when it can tell (nobody active today, or every account created today)."
      },
      "financial.revenueToday": {
        label: "Revenue today",
        hint: "openings + battle entries − refunds + upgrade stakes",
        title: "What players paid to play today: case openings and battle entries, less battle refunds, plus the " +
          "value of the items staked in upgrades."
      },
      "financial.profitToday": {
        label: "Profit today",
        hint: "revenue − completed withdrawals (SPEC)",
        title: "Revenue today less the withdrawals completed (paid) today, as SPEC defines it. The chart's profit " +
          "subtracts withdrawal requests instead."
      },
      "financial.depositsToday": {
        label: "Deposits today",
        hint: "confirmed today",
        title: "Deposits confirmed today (by the time of confirmation), without their fees."
      },
      "financial.withdrawalsToday": {
        label: "Withdrawals today",
        hint: "completed (paid) today (SPEC)",
        title: "Withdrawals completed today, by the time they were paid, as SPEC defines it. The chart's " +
          "withdrawals are the amounts debited when players request them instead."
      },
      "financial.pendingWithdrawals": {
        label: "Pending withdrawals",
        hint: "waiting now: PENDING or PROCESSING",
        title: "How many withdrawals wait to be settled now: PENDING (to approve) and PROCESSING (sent, no answer yet)."
      },
      "financial.itemSalesToday": {
        label: "Item sales today",
        hint: "paid to players for items sold back",
        title: "What players were credited today for items they sold back."
      },
      "financial.feesToday": {
        label: "Deposit fees today",
        hint: "fees on deposits confirmed today",
        title: "Fees paid on top of the deposits confirmed today; never credited to anyone."
      },
      "games.casesOpenedToday": { label: "Cases opened today", hint: "case openings", title: "Cases opened today." },
      "games.battlesToday": {
        label: "Battles today",
        hint: "battles created today",
        title: "Battles created today, whatever became of them."
      },
      "games.upgradesToday": { label: "Upgrades today", hint: "upgrades played today", title: "Upgrades played today." },
      "games.totalVolume": {
        label: "Volume today",
        hint: "all stakes today (= revenue)",
        title: "Everything staked today: the same figure as revenue today."
      },
      "games.ggrToday.total": {
        label: "GGR today",
        hint: "stakes − value awarded, all games",
        title: "Gross gaming revenue: what players staked today less the value of what they were awarded."
      }
    } satisfies Record<string, CardText>,
    growthZeroHint: "change in active users; 0 % also if none yesterday",
    growthNoBase: "nobody was active yesterday: no base for a percentage",
    ggrParts: (openings: string, upgrades: string, battles: string, raffles: string) =>
      ` Openings ${openings}, upgrades ${upgrades}, battles ${battles}, raffles ${raffles}.`,
    withdrawalsNote: "The withdrawals and profit above follow SPEC: withdrawals completed (paid) today. The chart " +
      "below counts withdrawal requests (the amounts debited when players ask), so its profit is revenue less those " +
      "requests.",
    revenue: "Revenue",
    period: "Period",
    periods: { "7d": "7 days", "30d": "30 days", "90d": "90 days" },
    chartDays: (days: string, zone: string) => `${days} days in ${zone}`,
    chartRevenue: "revenue",
    chartProfit: "profit after withdrawal requests",
    chartAverage: "daily average",
    chartGrowth: (days: string) => `growth vs the ${days} days before`,
    growthTitle: (days: string) =>
      `Revenue of these ${days} days against the ${days} days before them; n/a when there was no revenue before.`,
    growthCannotTell: " The API answers 0 % also then, and the console cannot tell which here.",
    growthNoRevenue: "no revenue in the days before: no base",
    day: "Day",
    series: {
      revenue: {
        label: "Revenue",
        counts: "case openings and battle entries less refunds, plus upgrade stakes, as the tile"
      },
      profit: {
        label: "Profit after requests",
        counts: "revenue less the day's withdrawal requests (not completed withdrawals, unlike the tile)"
      },
      deposits: { label: "Deposits", counts: "deposits credited to players that day" },
      withdrawals: {
        label: "Withdrawal requests",
        counts: "amounts debited when players requested a withdrawal that day, whatever became of it (the tile " +
          "counts completed ones)"
      }
    },
    alerts: "Alerts",
    noAlerts: "No alerts.",
    liveDrops: "Live drops",
    live: "● live",
    connecting: "○ connecting",
    noDrops: "No drops yet.",
    recentActivity: "Recent activity",
    activityNote: "The 20 newest case openings, confirmed deposits, withdrawal requests, upgrades and battles created.",
    nothingYet: "Nothing yet.",
    columns: { when: "When", type: "Type", user: "User", what: "What", value: "Value" },
    whenTitle: "In this browser's time zone",
    valueTitle: "Case opened: price paid · deposit: amount · withdrawal: amount requested · upgrade: value of the " +
      "item staked · battle: entry price",
    activityTypes: {
      CASE_OPEN: "Case opened",
      DEPOSIT: "Deposit confirmed",
      WITHDRAWAL_REQUEST: "Withdrawal requested",
      UPGRADE: "Upgrade played",
      BATTLE: "Battle created"
    } as Record<string, string>,
    activityValues: {
      CASE_OPEN: "price paid",
      DEPOSIT: "amount deposited",
      WITHDRAWAL_REQUEST: "amount requested",
      UPGRADE: "value of the item staked",
      BATTLE: "entry price"
    } as Record<string, string>
  },
  {
    title: "Painel",
    zone: { daysIn: "Dias em", today: (day: string) => ` · hoje é ${day} lá, de meia-noite a meia-noite` },
    notApplicable: "n/d",
    cards: {
      "users.total": {
        label: "Usuários",
        hint: "todas as contas, inclusive administradores",
        title: "Todas as contas existentes, de jogadores e administradores, banidas ou não."
      },
      "users.activeToday": {
        label: "Ativos hoje",
        hint: "usuários conectados vistos hoje",
        title: "Usuários distintos que fizeram ao menos uma requisição conectados hoje."
      },
      "users.newToday": { label: "Novos hoje", hint: "contas criadas hoje", title: "Contas criadas hoje." },
      "users.growth": {
        label: "Ativos vs ontem",
        hint: "variação de usuários ativos desde ontem",
        title: "Usuários ativos hoje em relação aos ativos ontem, em porcentagem. Sem ninguém ativo ontem não há " +
          "base: n/d. A API responde 0 % tanto sem variação quanto sem ninguém ontem; o console mostra n/d quando " +
          "consegue distinguir (ninguém ativo hoje, ou todas as contas criadas hoje)."
      },
      "financial.revenueToday": {
        label: "Receita hoje",
        hint: "aberturas + entradas em batalhas − reembolsos + apostas em upgrades",
        title: "O que os jogadores pagaram para jogar hoje: aberturas de caixas e entradas em batalhas, menos " +
          "reembolsos de batalhas, mais o valor dos itens apostados em upgrades."
      },
      "financial.profitToday": {
        label: "Lucro hoje",
        hint: "receita − saques concluídos (SPEC)",
        title: "Receita de hoje menos os saques concluídos (pagos) hoje, como a SPEC define. O lucro do gráfico " +
          "desconta as solicitações de saque."
      },
      "financial.depositsToday": {
        label: "Depósitos hoje",
        hint: "confirmados hoje",
        title: "Depósitos confirmados hoje (pelo horário da confirmação), sem as taxas."
      },
      "financial.withdrawalsToday": {
        label: "Saques hoje",
        hint: "concluídos (pagos) hoje (SPEC)",
        title: "Saques concluídos hoje, pelo horário do pagamento, como a SPEC define. Os saques do gráfico são os " +
          "valores debitados quando os jogadores os solicitam."
      },
      "financial.pendingWithdrawals": {
        label: "Saques pendentes",
        hint: "aguardando agora: PENDING ou PROCESSING",
        title: "Quantos saques aguardam liquidação agora: PENDING (a aprovar) e PROCESSING (enviados, sem resposta)."
      },
      "financial.itemSalesToday": {
        label: "Vendas de itens hoje",
        hint: "pago aos jogadores por itens vendidos",
        title: "O que os jogadores receberam hoje pelos itens que venderam de volta."
      },
      "financial.feesToday": {
        label: "Taxas de depósito hoje",
        hint: "taxas dos depósitos confirmados hoje",
        title: "Taxas pagas além dos depósitos confirmados hoje; nunca creditadas a ninguém."
      },
      "games.casesOpenedToday": { label: "Caixas abertas hoje", hint: "aberturas de caixas", title: "Caixas abertas hoje." },
      "games.battlesToday": {
        label: "Batalhas hoje",
        hint: "batalhas criadas hoje",
        title: "Batalhas criadas hoje, qualquer que tenha sido o resultado."
      },
      "games.upgradesToday": { label: "Upgrades hoje", hint: "upgrades jogados hoje", title: "Upgrades jogados hoje." },
      "games.totalVolume": {
        label: "Volume hoje",
        hint: "todas as apostas de hoje (= receita)",
        title: "Tudo o que foi apostado hoje: o mesmo valor da receita de hoje."
      },
      "games.ggrToday.total": {
        label: "GGR hoje",
        hint: "apostas − valor pago em prêmios, todos os jogos",
        title: "Receita bruta de jogo: o que os jogadores apostaram hoje menos o valor do que ganharam."
      }
    },
    growthZeroHint: "variação de usuários ativos; 0 % também se ninguém ontem",
    growthNoBase: "ninguém esteve ativo ontem: não há base para uma porcentagem",
    ggrParts: (openings: string, upgrades: string, battles: string, raffles: string) =>
      ` Aberturas ${openings}, upgrades ${upgrades}, batalhas ${battles}, rifas ${raffles}.`,
    withdrawalsNote: "Os saques e o lucro acima seguem a SPEC: saques concluídos (pagos) hoje. O gráfico abaixo " +
      "conta solicitações de saque (os valores debitados quando os jogadores pedem), então o lucro dele é a receita " +
      "menos essas solicitações.",
    revenue: "Receita",
    period: "Período",
    periods: { "7d": "7 dias", "30d": "30 dias", "90d": "90 dias" },
    chartDays: (days: string, zone: string) => `${days} dias em ${zone}`,
    chartRevenue: "receita",
    chartProfit: "lucro após solicitações de saque",
    chartAverage: "média diária",
    chartGrowth: (days: string) => `crescimento vs os ${days} dias anteriores`,
    growthTitle: (days: string) =>
      `Receita destes ${days} dias em relação aos ${days} dias anteriores; n/d quando não houve receita antes.`,
    growthCannotTell: " A API também responde 0 % nesse caso, e aqui o console não consegue distinguir.",
    growthNoRevenue: "sem receita nos dias anteriores: não há base",
    day: "Dia",
    series: {
      revenue: {
        label: "Receita",
        counts: "aberturas de caixas e entradas em batalhas menos reembolsos, mais apostas em upgrades, como no card"
      },
      profit: {
        label: "Lucro após solicitações",
        counts: "receita menos as solicitações de saque do dia (não os saques concluídos, ao contrário do card)"
      },
      deposits: { label: "Depósitos", counts: "depósitos creditados aos jogadores no dia" },
      withdrawals: {
        label: "Solicitações de saque",
        counts: "valores debitados quando os jogadores solicitaram um saque no dia, qualquer que tenha sido o " +
          "resultado (o card conta os concluídos)"
      }
    },
    alerts: "Alertas",
    noAlerts: "Nenhum alerta.",
    liveDrops: "Drops ao vivo",
    live: "● ao vivo",
    connecting: "○ conectando",
    noDrops: "Nenhum drop ainda.",
    recentActivity: "Atividade recente",
    activityNote: "As 20 mais recentes entre aberturas de caixas, depósitos confirmados, solicitações de saque, " +
      "upgrades e batalhas criadas.",
    nothingYet: "Nada ainda.",
    columns: { when: "Quando", type: "Tipo", user: "Usuário", what: "O quê", value: "Valor" },
    whenTitle: "No fuso horário deste navegador",
    valueTitle: "Caixa aberta: preço pago · depósito: valor · saque: valor solicitado · upgrade: valor do item " +
      "apostado · batalha: preço de entrada",
    activityTypes: {
      CASE_OPEN: "Caixa aberta",
      DEPOSIT: "Depósito confirmado",
      WITHDRAWAL_REQUEST: "Saque solicitado",
      UPGRADE: "Upgrade jogado",
      BATTLE: "Batalha criada"
    },
    activityValues: {
      CASE_OPEN: "preço pago",
      DEPOSIT: "valor depositado",
      WITHDRAWAL_REQUEST: "valor solicitado",
      UPGRADE: "valor do item apostado",
      BATTLE: "preço de entrada"
    }
  }
)
