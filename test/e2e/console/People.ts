/**
 * The people pages in a browser (users, deposits, withdrawals, one player), registered by Console.test.ts: each
 * scenario in English and in Brazilian Portuguese (the browser's language), finding every button by the words of
 * the pages' own text modules, photographed at 1280x800 and 390x844 (names end in -en / -pt), with no console error.
 * Every figure the pages show is checked against the API.
 */
import { afterAll, expect, it } from "vitest"
import { createHash } from "node:crypto"
import { authenticator } from "otplib"
import pg from "pg"
import type { Page } from "playwright-core"
import {
  ADMIN,
  ADMIN_WITH_2FA,
  answerConfirmation,
  base,
  call,
  newContext,
  ok,
  photograph,
  type RunningService,
  signIn,
  startService,
  switchService,
  watch
} from "../../support/ConsoleBrowser"
import { devSessionAt } from "../../support/DevSignIn"
import { depositsText } from "../../../web/src/admin/text/deposits"
import { common } from "../../../web/src/text/common"
import { peopleText } from "../../../web/src/admin/text/people"
import { playerText } from "../../../web/src/admin/text/player"
import { usersText } from "../../../web/src/admin/text/users"
import { withdrawalsText } from "../../../web/src/admin/text/withdrawals"

const LOCALES = ["en", "pt-BR"] as const
type Locale = (typeof LOCALES)[number]
const suffix = (locale: Locale) => (locale === "en" ? "en" : "pt")

/** An amount as the pages show it in `locale`. */
const moneyIn = (locale: Locale) => (cents: number) =>
  new Intl.NumberFormat(locale, { style: "currency", currency: "BRL" }).format(cents / 100)

/** The reference an administrator sees for a session (docs/rules.md#player-page). */
const referenceOf = (session: string) => createHash("sha256").update(session).digest("hex").slice(0, 24)

const PHONE = { width: 390, height: 844 }
const DESKTOP = { width: 1280, height: 800 }

/** On the phone, nothing wider than the screen. */
const fitsThePhone = async (page: Page, what: string) =>
  expect(await page.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth"), what)
    .toBeLessThanOrEqual(0)

export const peopleScenarios = () => {
  for (const locale of LOCALES) {
    const tag = suffix(locale)
    it(`people (${locale}): an administrator finds a player, reads their money history in pages, ends a session, adjusts the balance, bans and unbans, each after a confirmation`, async () => {
      const w = peopleText.in(locale)
      const u = usersText.in(locale)
      const p = playerText.in(locale)
      const d = depositsText.in(locale)
      const q = withdrawalsText.in(locale)
      const money = moneyIn(locale)

      // A player with more ledger rows than a page holds, a deposit, a withdrawal, an opening and two sessions;
      // a second player whose name shares the prefix, so the search has something to leave out.
      const admin = await devSessionAt(base, ADMIN)
      const name = `e2e-people-${tag}`
      const session = await devSessionAt(base, name)
      const other = await devSessionAt(base, `${name}-other`)
      const player = (await ok(session, "GET", "/api/auth/me")) as { id: string; username: string }
      await ok(other, "GET", "/api/auth/me")
      await ok(admin, "POST", `/api/admin/users/${player.id}/adjust-balance`, { amountCents: 50_000, reason: "e2e start" })
      for (let i = 1; i <= 10; i++) {
        await ok(admin, "POST", `/api/admin/users/${player.id}/adjust-balance`, { amountCents: i, reason: `e2e ${i}` })
      }
      const { cases } = await ok(admin, "GET", "/api/cases")
      const opened = await ok(session, "POST", `/api/cases/${cases[0].id}/open`)
      const withdrawal = await ok(session, "POST", "/api/withdrawals/request", {
        amountCents: 4_000,
        paymentMethod: "PIX",
        paymentDetails: { pixKeyType: "EMAIL", pixKey: `${tag}@example.com` }
      })
      const deposit = await ok(session, "POST", "/api/payment/deposit/initiate", { amountCents: 2_500, method: "PIX" })
      const second = await devSessionAt(base, name)
      const profileOf = async () =>
        (await ok(admin, "GET", `/api/admin/users/${player.id}`)) as {
          balanceCents: number
          banned: { reason: string } | null
          sessions: Array<{ id: string }>
          counts: { transactions: number }
        }
      const before = await profileOf()
      expect(before.counts.transactions).toBe(13)

      const context = await newContext(locale)
      const page = await context.newPage()
      const errors: Array<string> = []
      // The debit beyond the balance is refused (400) on purpose.
      watch(page, errors, [new RegExp(`^/api/admin/users/${player.id}/adjust-balance$`)])
      await signIn(page, ADMIN)

      // The deposits and withdrawals lists: statuses in words, the player's rows, filtered by status.
      await page.goto(`${base}/admin/deposits`)
      const depositRow = page.locator(`[data-testid=deposits] tr[data-id="${deposit.depositId}"]`)
      await expect.poll(() => depositRow.getByTestId("status").textContent()).toBe(w.depositStatus.PENDING)
      await page.getByLabel(d.status, { exact: true }).selectOption("CONFIRMED")
      await expect.poll(() => depositRow.count()).toBe(0)
      await page.getByLabel(d.status, { exact: true }).selectOption("")
      await expect.poll(() => depositRow.getByTestId("status").textContent()).toBe(w.depositStatus.PENDING)
      expect(await depositRow.getByRole("button", { name: d.confirm, exact: true }).isVisible()).toBe(true)
      await photograph(page, `people-deposits-${tag}`)
      await page.goto(`${base}/admin/withdrawals`)
      const withdrawalRow = page.locator(`[data-testid=withdrawals] tr[data-id="${withdrawal.id}"]`)
      await expect.poll(() => withdrawalRow.getByTestId("status").textContent()).toBe(w.withdrawalStatus.PENDING)
      expect(await withdrawalRow.getByRole("button", { name: q.approve, exact: true }).isVisible()).toBe(true)
      expect(await withdrawalRow.getByRole("button", { name: q.rejectOpen, exact: true }).isVisible()).toBe(true)
      await photograph(page, `people-withdrawals-${tag}`)

      // The users list: the search finds the player alone; the link opens their page.
      await page.goto(`${base}/admin/users`)
      await page.getByLabel(u.searchLabel, { exact: true }).fill(name)
      await page.getByRole("button", { name: u.search, exact: true }).click()
      await expect.poll(() => page.locator("[data-testid=users] tbody tr").count()).toBe(2)
      await page.getByLabel(u.searchLabel, { exact: true }).fill(`${name}-other`)
      await page.getByRole("button", { name: u.search, exact: true }).click()
      await expect.poll(() => page.locator("[data-testid=users] tbody tr").count()).toBe(1)
      await page.getByLabel(u.searchLabel, { exact: true }).fill(name.toUpperCase())
      await page.getByRole("button", { name: u.search, exact: true }).click()
      await expect.poll(() => page.locator("[data-testid=users] tbody tr").count()).toBe(2)
      const row = page.locator(`[data-testid=users] tr[data-username="${name}"]`)
      expect(await row.getByTestId("two-factor").textContent()).toBe(w.off)
      expect(await row.getByTestId("sessions").textContent()).toBe("2")
      expect(await row.getByTestId("status").textContent()).toBe(w.active)
      await photograph(page, `people-users-${tag}`)
      await row.getByTestId("user-link").click()
      await page.waitForURL(`${base}/admin/users/${player.id}`)
      await expect.poll(() => page.getByTestId("player-name").textContent()).toBe(name)
      expect(await page.getByTestId("player-balance").textContent()).toBe(money(before.balanceCents))
      expect(await page.getByTestId("player-identity").textContent()).toBe(p.notVerified)

      // The whole money history: the ledger in pages (newest first, as the API has them), then each tab.
      const ledger = (await ok(admin, "GET", `/api/admin/users/${player.id}/transactions?limit=100`)).transactions as Array<
        { id: string; type: string; reason: string | null }
      >
      const ledgerRows = page.locator("[data-testid=transactions] tbody tr")
      await expect.poll(() => ledgerRows.count()).toBe(10)
      expect(await ledgerRows.first().getAttribute("data-id")).toBe(ledger[0]!.id)
      const pager = page.getByTestId("pager")
      await pager.getByRole("button").last().click()
      await expect.poll(() => ledgerRows.count()).toBe(3)
      expect(await ledgerRows.evaluateAll((rows) => rows.map((r) => r.getAttribute("data-id"))))
        .toEqual(ledger.slice(10).map((t) => t.id))
      expect(await ledgerRows.last().getByTestId("type").textContent()).toBe(w.transactionType.ADMIN_ADJUSTMENT)
      // Narrowed to one type: the opening alone.
      await page.getByLabel(p.type, { exact: true }).selectOption("CASE_OPEN")
      await expect.poll(() => ledgerRows.count()).toBe(1)
      expect(await ledgerRows.first().getByTestId("type").textContent()).toBe(w.transactionType.CASE_OPEN)
      await page.getByLabel(p.type, { exact: true }).selectOption("")
      await expect.poll(() => ledgerRows.count()).toBe(10)
      await page.getByRole("tab", { name: new RegExp(`^${p.tabs.deposits}`) }).click()
      await expect.poll(() =>
        page.locator(`[data-testid=deposits] tr[data-id="${deposit.depositId}"] [data-testid=status]`).textContent()
      ).toBe(w.depositStatus.PENDING)
      await page.getByRole("tab", { name: new RegExp(`^${p.tabs.withdrawals}`) }).click()
      await expect.poll(() =>
        page.locator(`[data-testid=withdrawals] tr[data-id="${withdrawal.id}"] [data-testid=status]`).textContent()
      ).toBe(w.withdrawalStatus.PENDING)
      await page.getByRole("tab", { name: new RegExp(`^${p.tabs.openings}`) }).click()
      await expect.poll(() => page.locator(`[data-testid=openings] tr[data-id="${opened.openingId}"]`).textContent())
        .toContain(opened.item.name)
      await page.getByRole("tab", { name: new RegExp(`^${p.tabs.audit}`) }).click()
      await page.getByTestId("audit").waitFor()
      await page.getByRole("tab", { name: new RegExp(`^${p.tabs.transactions}`) }).click()
      await expect.poll(() => ledgerRows.count()).toBe(10)
      await photograph(page, `people-player-${tag}`)

      // On the phone: one of the two sessions ended; its next request is refused, the other still works.
      await page.setViewportSize(PHONE)
      const sessionRows = page.locator("[data-testid=sessions] tbody tr")
      expect(await sessionRows.count()).toBe(2)
      const ended = page.locator(`[data-testid=sessions] tr[data-id="${referenceOf(second)}"]`)
      await ended.getByRole("button", { name: p.revoke, exact: true }).click()
      await expect.poll(() => sessionRows.count()).toBe(1)
      expect(await page.getByRole("status").allTextContents()).toContain(p.sessionEnded(referenceOf(second).slice(0, 8)))
      expect((await call(second, "GET", "/api/auth/me")).status).toBe(401)
      expect((await call(session, "GET", "/api/auth/me")).status).toBe(200)
      await fitsThePhone(page, "the player page after a revocation")
      await page.setViewportSize(DESKTOP)

      // A credit with a reason: the confirmation names the player, the amount and the balance before and after;
      // cancelled, nothing moves; confirmed, the page shows the balance and the ledger row the API then has.
      const actions = page.getByTestId("player-actions")
      const balance = before.balanceCents
      await actions.getByRole("button", { name: w.adjustOpen, exact: true }).click()
      await actions.getByLabel(w.amount, { exact: true }).fill(locale === "en" ? "12.34" : "12,34")
      await actions.getByLabel(w.reason, { exact: true }).fill(`goodwill ${tag}`)
      await actions.getByRole("button", { name: w.adjustBy(money(1_234)), exact: true }).click()
      await answerConfirmation(page, [name, money(1_234), money(balance), money(balance + 1_234), `goodwill ${tag}`], w.cancel)
      expect((await profileOf()).balanceCents).toBe(balance)
      await actions.getByRole("button", { name: w.adjustBy(money(1_234)), exact: true }).click()
      await answerConfirmation(page, [name, money(1_234)], w.adjustBy(money(1_234)))
      await expect.poll(() => page.getByTestId("player-balance").textContent()).toBe(money(balance + 1_234))
      expect(await page.getByRole("status").allTextContents()).toContain(w.balanceNow(name, money(balance + 1_234)))
      expect((await profileOf()).balanceCents).toBe(balance + 1_234)
      const newest = (await ok(admin, "GET", `/api/admin/users/${player.id}/transactions?limit=1`)).transactions[0]
      expect(newest).toMatchObject({ type: "ADMIN_ADJUSTMENT", amountCents: 1_234, reason: `goodwill ${tag}` })
      await expect.poll(() => ledgerRows.first().getAttribute("data-id")).toBe(newest.id)
      expect(await ledgerRows.first().getByTestId("reason").textContent()).toBe(`goodwill ${tag}`)
      expect(await ledgerRows.first().getByTestId("amount").textContent()).toBe(money(1_234))
      // A debit beyond the balance: refused as the API words it, nothing moves.
      await actions.getByRole("button", { name: w.adjustOpen, exact: true }).click()
      await actions.getByLabel(w.amount, { exact: true }).fill("-100000")
      await actions.getByLabel(w.reason, { exact: true }).fill("too much")
      await actions.getByRole("button", { name: w.adjustBy(money(-10_000_000)), exact: true }).click()
      await answerConfirmation(page, [name, money(10_000_000)], w.adjustBy(money(-10_000_000)))
      await expect.poll(() => page.getByRole("alert").allTextContents()).toEqual(["Insufficient balance"])
      expect((await profileOf()).balanceCents).toBe(balance + 1_234)
      await actions.getByRole("button", { name: w.cancel, exact: true }).click()

      // Banned after a confirmation naming the player and the reason; the page shows the ban as the API has it.
      await actions.getByRole("button", { name: w.banOpen, exact: true }).click()
      await actions.getByLabel(w.reason, { exact: true }).fill(`chargeback ${tag}`)
      await actions.getByRole("button", { name: w.ban, exact: true }).click()
      await answerConfirmation(page, [name, `chargeback ${tag}`], w.cancel)
      expect((await profileOf()).banned).toBeNull()
      await actions.getByRole("button", { name: w.ban, exact: true }).click()
      await answerConfirmation(page, [name, `chargeback ${tag}`], w.banConfirm(name))
      await expect.poll(() => page.getByTestId("player-status").getAttribute("data-status")).toBe("banned")
      expect(await page.getByTestId("player-status").textContent()).toContain(`chargeback ${tag}`)
      expect(await page.getByRole("status").allTextContents()).toContain(w.bannedDone(name, 1))
      expect((await profileOf()).banned).toMatchObject({ reason: `chargeback ${tag}` })
      // Every session of theirs ended with the ban.
      expect([401, 403]).toContain((await call(session, "GET", "/api/auth/me")).status)
      await page.getByTestId("no-sessions").waitFor()
      await photograph(page, `people-player-banned-${tag}`)

      // Unbanned on the phone, after a confirmation naming the player.
      await page.setViewportSize(PHONE)
      await actions.getByRole("button", { name: w.unban, exact: true }).click()
      await answerConfirmation(page, [name], w.unbanConfirm(name))
      await expect.poll(() => page.getByTestId("player-status").textContent()).toBe(w.active)
      expect((await profileOf()).banned).toBeNull()
      expect(await actions.getByRole("button", { name: w.banOpen, exact: true }).isVisible()).toBe(true)
      await fitsThePhone(page, "the player page after unbanning")
      await page.setViewportSize(DESKTOP)

      expect(errors).toEqual([])
      await context.close()
    }, 120_000)
  }

  /** A service of these scenarios' own: many users, and an administrator with 2FA who is nobody else's. */
  let own: RunningService | undefined
  const ownService = async () => (own ??= await startService())
  afterAll(() => own?.stop(), 60_000)

  it("people: paging through every user, to the last page, in both languages (10 000 seeded on PostgreSQL; those the API created on the embedded database)", async () => {
    const service = await ownService()
    const main = switchService(service.url)
    try {
      const admin = await devSessionAt(base, ADMIN)
      if (service.databaseUrl !== undefined) {
        const client = new pg.Client({ connectionString: service.databaseUrl })
        await client.connect()
        try {
          await client.query(
            `INSERT INTO users (idp_id, username) SELECT 'e2e-many-' || n, 'e2e-many-' || lpad(n::text, 5, '0')
             FROM generate_series(1, 10000) AS n`
          )
        } finally {
          await client.end()
        }
      } else {
        for (let n = 1; n <= 60; n++) await devSessionAt(base, `e2e-many-${n}`)
      }
      const { total } = await ok(admin, "GET", "/api/admin/users?limit=1")
      expect(total).toBeGreaterThan(service.databaseUrl === undefined ? 60 : 10_000)
      const LIMIT = 50
      const pages = Math.ceil(total / LIMIT)
      const last = (await ok(admin, "GET", `/api/admin/users?page=${pages}&limit=${LIMIT}`)).users as Array<{ id: string }>

      for (const locale of LOCALES) {
        const context = await newContext(locale)
        const page = await context.newPage()
        const errors: Array<string> = []
        watch(page, errors)
        await signIn(page, ADMIN)
        // English at 1280 px, Portuguese on the phone.
        if (locale === "pt-BR") await page.setViewportSize(PHONE)
        await page.goto(`${base}/admin/users`)
        const rows = page.locator("[data-testid=users] tbody tr")
        await expect.poll(() => rows.count()).toBe(LIMIT)
        const c = common.in(locale)
        const pager = page.getByTestId("pager")
        const next = pager.getByRole("button", { name: c.next, exact: true })
        // A page or two forward (not to the last), then to the last at once.
        for (let n = 2; n < Math.min(4, pages); n++) {
          const before = await rows.first().getAttribute("data-id")
          await next.click()
          await expect.poll(() => rows.first().getAttribute("data-id")).not.toBe(before)
        }
        await pager.getByRole("button", { name: c.lastPage, exact: true }).click()
        await expect.poll(() => rows.evaluateAll((all) => all.map((r) => r.getAttribute("data-id")))).toEqual(last.map((r) => r.id))
        const n = (value: number) => new Intl.NumberFormat(locale).format(value)
        expect(await page.getByTestId("pager-summary").textContent())
          .toBe(c.range(n((pages - 1) * LIMIT + 1), n(total), n(total), n(pages), n(pages)))
        expect(await next.isDisabled()).toBe(true)
        if (locale === "pt-BR") await fitsThePhone(page, "the last page of users")
        await photograph(page, `people-users-last-page-${suffix(locale)}`)
        expect(errors).toEqual([])
        await context.close()
      }
    } finally {
      switchService(main)
    }
  }, 600_000)

  it("people: an administrator with 2FA adjusts a balance from the player page only with a current code", async () => {
    const service = await ownService()
    const main = switchService(service.url)
    try {
      const guarded = await devSessionAt(base, ADMIN_WITH_2FA)
      const { secret } = await ok(guarded, "POST", "/api/auth/2fa/generate")
      // Turned on with the previous step's code, so the current one is fresh for the step-up below.
      if (Date.now() % 30_000 > 28_000) await new Promise((resolve) => setTimeout(resolve, 2_500))
      await ok(guarded, "POST", "/api/auth/2fa/enable", { code: authenticator.clone({ epoch: Date.now() - 30_000 }).generate(secret) })
      const session = await devSessionAt(base, "e2e-people-2fa")
      const player = (await ok(session, "GET", "/api/auth/me")) as { id: string }

      for (const locale of LOCALES) {
        const w = peopleText.in(locale)
        const money = moneyIn(locale)
        const context = await newContext(locale)
        const page = await context.newPage()
        const errors: Array<string> = []
        watch(page, errors, [new RegExp(`^/api/admin/users/${player.id}/adjust-balance$`)])
        await signIn(page, ADMIN_WITH_2FA)
        // Through the list: the service serves /admin/<section> only, not /admin/users/<id> itself.
        await page.goto(`${base}/admin/users`)
        await page.getByLabel(usersText.in(locale).searchLabel, { exact: true }).fill("e2e-people-2fa")
        await page.getByRole("button", { name: usersText.in(locale).search, exact: true }).click()
        await page.locator(`[data-testid=users] tr[data-id="${player.id}"]`).getByTestId("user-link").click()
        await page.waitForURL(`${base}/admin/users/${player.id}`)
        const balance = (await ok(guarded, "GET", `/api/admin/users/${player.id}`)).balanceCents as number
        const actions = page.getByTestId("player-actions")
        await expect.poll(() => page.getByTestId("player-balance").textContent()).toBe(money(balance))
        await actions.getByRole("button", { name: w.adjustOpen, exact: true }).click()
        await actions.getByLabel(w.amount, { exact: true }).fill("5")
        await actions.getByLabel(w.reason, { exact: true }).fill(`2fa ${locale}`)
        await actions.getByRole("button", { name: w.adjustBy(money(500)), exact: true }).click()
        await answerConfirmation(page, ["e2e-people-2fa", money(500)], w.adjustBy(money(500)))
        await expect.poll(() => page.getByRole("alert").allTextContents()).toEqual(["2FA code required"])
        // A step's code is accepted once (docs/rules.md#totp-replay): the second language waits for the next step.
        if (locale !== LOCALES[0]) await new Promise((resolve) => setTimeout(resolve, 30_500 - (Date.now() % 30_000)))
        // The code field is the console's (Console.tsx): the only one-time-code input on the page.
        await page.locator("input[autocomplete=one-time-code]").fill(authenticator.generate(secret))
        await actions.getByRole("button", { name: w.adjustBy(money(500)), exact: true }).click()
        await answerConfirmation(page, ["e2e-people-2fa", money(500)], w.adjustBy(money(500)))
        await expect.poll(() => page.getByTestId("player-balance").textContent()).toBe(money(balance + 500))
        expect(errors).toEqual([])
        await context.close()
      }
    } finally {
      switchService(main)
    }
  }, 120_000)
}
