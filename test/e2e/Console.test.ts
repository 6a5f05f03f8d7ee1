/**
 * The browser pages end to end (harness: test/support/ConsoleBrowser.ts): an administrator signs in through the
 * development identity provider and works through the console; every answer is checked against the API. Each
 * page is photographed at 1280x800 and 390x844, must not scroll sideways on the phone, and must log no console
 * error.
 */
import { expect, it } from "vitest"
import { createServer as createHttpServer } from "node:http"
import { authenticator } from "otplib"
import type { BrowserContext } from "playwright-core"
import {
  ADMIN,
  ADMIN_WITH_2FA,
  answerConfirmation,
  base,
  call,
  describeInBrowser,
  money as moneyIn,
  newContext,
  ok,
  photograph,
  signIn,
  startService,
  switchService,
  turnOnTwoFactor,
  watch
} from "../support/ConsoleBrowser"
import { devSessionAt } from "../support/DevSignIn"
import { languageScenarios } from "./console/Languages"
import { peopleScenarios } from "./console/People"
import { freePort } from "../support/ServiceProcess"
import { audit } from "../../web/src/admin/text/audit"
import { catalog } from "../../web/src/admin/text/catalog"
import { consoleText } from "../../web/src/admin/text/console"
import { dashboard } from "../../web/src/admin/text/dashboard"
import { common } from "../../web/src/text/common"
import { home } from "../../web/src/text/home"

// These scenarios run in English (the browser's language "en"), except the dashboard's figures in pt-BR;
// test/e2e/console/Languages.ts switches between the two. The translated pages' words come from their text modules.
const money = (cents: number) => moneyIn(cents, "en")
const percentIn = (locale: "en" | "pt-BR") => (fraction: number) =>
  new Intl.NumberFormat(locale, { style: "percent", minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(fraction)
const percent = percentIn("en")
const c = catalog.in("en")

describeInBrowser("the console in a browser", () => {
  it("an administrator works through the console; what it shows and does agrees with the API", async () => {
    // Players, their money and their requests, through the API.
    const admin = await devSessionAt(base, ADMIN)
    const players = Object.fromEntries(
      await Promise.all(["alice", "bob", "carol", "dave"].map(async (name) => {
        const session = await devSessionAt(base, `e2e-${name}`)
        const me = await ok(session, "GET", "/api/auth/me")
        return [name, { session, id: me.id as string, username: me.username as string }] as const
      }))
    )
    for (const name of ["alice", "bob"]) {
      await ok(admin, "POST", `/api/admin/users/${players[name]!.id}/adjust-balance`, { amountCents: 20_000, reason: "e2e" })
    }
    const request = (name: string, amountCents: number) =>
      ok(players[name]!.session, "POST", "/api/withdrawals/request", {
        amountCents,
        paymentMethod: "PIX",
        paymentDetails: { pixKeyType: "EMAIL", pixKey: `${name}@example.com` }
      })
    const toApprove = await request("alice", 5_000)
    const toReject = await request("bob", 7_000)
    const deposit = await ok(players.carol!.session, "POST", "/api/payment/deposit/initiate", {
      amountCents: 3_000,
      method: "PIX"
    })

    const context = await newContext("en")
    const page = await context.newPage()
    const errors: Array<string> = []
    watch(page, errors)

    // `/` signed out, then signed in.
    await page.goto(`${base}/`)
    await page.getByTestId("sign-in").waitFor()
    await photograph(page, "home-signed-out")
    await signIn(page, ADMIN)
    await expect.poll(() => page.getByTestId("balance").textContent()).toBe(money(0))
    await photograph(page, "home-signed-in")

    // Dashboard: every card as the API has it; the chart's period switch.
    await page.getByTestId("console-link").click()
    await page.waitForURL(`${base}/admin`)
    await page.getByTestId("stats").waitFor()
    const stats = (await context.request.get(`${base}/api/admin/dashboard`).then((r) => r.json())) as {
      users: Record<string, number>
      financial: Record<string, number>
      games: Record<string, number> & { ggrToday: { total: number } }
    }
    const count = (n: number) => n.toLocaleString("en")
    const expected: Record<string, string> = {
      "users.total": count(stats.users.total!),
      "users.activeToday": count(stats.users.activeToday!),
      "users.newToday": count(stats.users.newToday!),
      "financial.revenueToday": money(stats.financial.revenueToday!),
      "financial.profitToday": money(stats.financial.profitToday!),
      "financial.depositsToday": money(stats.financial.depositsToday!),
      "financial.withdrawalsToday": money(stats.financial.withdrawalsToday!),
      "financial.pendingWithdrawals": count(stats.financial.pendingWithdrawals!),
      "financial.itemSalesToday": money(stats.financial.itemSalesToday!),
      "financial.feesToday": money(stats.financial.feesToday!),
      "games.casesOpenedToday": count(stats.games.casesOpenedToday!),
      "games.battlesToday": count(stats.games.battlesToday!),
      "games.upgradesToday": count(stats.games.upgradesToday!),
      "games.totalVolume": money(stats.games.totalVolume!),
      "games.ggrToday.total": money(stats.games.ggrToday.total)
    }
    const shown: Record<string, string | null> = {}
    for (const id of Object.keys(expected)) shown[id] = await page.getByTestId(`stat-${id}`).textContent()
    expect(shown).toEqual(expected)
    expect(stats.users.total).toBe(5)
    expect(stats.financial.pendingWithdrawals).toBe(2)
    await expect.poll(() => page.getByTestId("chart-summary").getAttribute("data-points")).toBe("7")
    await page.getByRole("button", { name: dashboard.in("en").periods["30d"] }).click()
    await expect.poll(() => page.getByTestId("chart-summary").getAttribute("data-points")).toBe("30")
    // A drop reaches the page through the live stream.
    await expect.poll(() => page.getByTestId("live-state").getAttribute("data-live")).toBe("true")
    const item = (await ok(admin, "GET", "/api/admin/items?limit=1")).items[0]
    await ok(admin, "POST", "/api/live-drops/emit", { userId: players.alice!.id, itemId: item.id, source: "CASE_OPEN" })
    await expect.poll(() => page.getByTestId("live-drops").textContent()).toContain(item.name)
    await photograph(page, "dashboard")

    // Withdrawals: approve one, reject the other; the outcome in the row without reloading.
    await page.getByRole("link", { name: "Withdrawals" }).click()
    const approveRow = page.locator(`tr[data-id="${toApprove.id}"]`)
    const rejectRow = page.locator(`tr[data-id="${toReject.id}"]`)
    await expect.poll(() => approveRow.locator("td").nth(1).textContent()).toBe(money(5_000))
    await photograph(page, "withdrawals")
    // Approving asks first, naming the amount and the person; cancelled, nothing moves.
    await approveRow.getByRole("button", { name: "Approve" }).click()
    await answerConfirmation(page, [money(5_000), "e2e-alice", "alice@example.com"], common.in("en").cancel)
    expect(await approveRow.getByTestId("status").textContent()).toBe("PENDING")
    expect((await ok(admin, "GET", `/api/admin/withdrawals?status=PENDING&limit=100`)).withdrawals.map((w: { id: string }) => w.id))
      .toContain(toApprove.id)
    expect((await ok(players.alice!.session, "GET", "/api/auth/me")).balanceCents).toBe(15_000)
    await approveRow.getByRole("button", { name: "Approve" }).click()
    await answerConfirmation(page, [money(5_000), "e2e-alice"], `Approve ${money(5_000)}`)
    await expect.poll(() => approveRow.getByTestId("status").textContent()).toBe("COMPLETED")
    await rejectRow.getByRole("button", { name: "Reject…" }).click()
    await rejectRow.getByLabel("Reason").fill("PIX key does not match the account holder")
    await rejectRow.getByRole("button", { name: "Reject", exact: true }).click()
    await expect.poll(() => rejectRow.getByTestId("status").textContent()).toBe("REJECTED")
    expect((await ok(players.alice!.session, "GET", "/api/auth/me")).balanceCents).toBe(15_000)
    expect((await ok(players.bob!.session, "GET", "/api/auth/me")).balanceCents).toBe(20_000)
    const bobs = (await ok(players.bob!.session, "GET", "/api/withdrawals")).withdrawals
    expect(bobs.map((w: { status: string; rejectionReason: string }) => [w.status, w.rejectionReason])).toEqual([
      ["REJECTED", "PIX key does not match the account holder"]
    ])

    // Deposits: confirm the pending one.
    await page.getByRole("link", { name: "Deposits" }).click()
    const depositRow = page.locator(`tr[data-id="${deposit.depositId}"]`)
    await expect.poll(() => depositRow.locator("td").nth(1).textContent()).toBe(money(3_000))
    await photograph(page, "deposits")
    await depositRow.getByRole("button", { name: "Confirm" }).click()
    await answerConfirmation(page, [money(3_000), "e2e-carol"], common.in("en").cancel)
    expect(await depositRow.getByTestId("status").textContent()).toBe("PENDING")
    expect((await ok(players.carol!.session, "GET", "/api/auth/me")).balanceCents).toBe(0)
    await depositRow.getByRole("button", { name: "Confirm" }).click()
    await answerConfirmation(page, [money(3_000), "e2e-carol"], `Confirm ${money(3_000)}`)
    await expect.poll(() => depositRow.getByTestId("status").textContent()).toBe("CONFIRMED")
    expect((await ok(players.carol!.session, "GET", "/api/auth/me")).balanceCents).toBe(3_000)

    // Users: find dave and ban him; his next API call is refused.
    await page.getByRole("link", { name: "Users" }).click()
    await page.getByLabel("Search users").fill("e2e-dave")
    await page.getByRole("button", { name: "Search" }).click()
    const daveRow = page.locator(`tr[data-username="e2e-dave"]`)
    await expect.poll(() => page.locator("[data-testid=users] tbody tr").count()).toBe(1)
    expect([await daveRow.getByTestId("two-factor").textContent(), await daveRow.getByTestId("sessions").textContent()])
      .toEqual(["off", "1"])
    await photograph(page, "users")
    await daveRow.getByRole("button", { name: "Ban…" }).click()
    await daveRow.getByLabel("Reason").fill("chargeback fraud")
    await daveRow.getByRole("button", { name: "Ban", exact: true }).click()
    await answerConfirmation(page, ["e2e-dave", "chargeback fraud"], "Ban e2e-dave")
    await expect.poll(() => daveRow.getByTestId("status").textContent()).toMatch(/^banned/)
    expect(await daveRow.getByTestId("sessions").textContent()).toBe("0")
    const refused = await call(players.dave!.session, "GET", "/api/auth/me")
    expect(refused.status).toBeGreaterThanOrEqual(401)
    expect(refused.status).toBeLessThanOrEqual(403)
    // An adjustment with a reason, in R$ as typed.
    await page.getByLabel("Search users").fill("e2e-carol")
    await page.getByRole("button", { name: "Search" }).click()
    const carolRow = page.locator(`tr[data-username="e2e-carol"]`)
    await expect.poll(() => page.locator("[data-testid=users] tbody tr").count()).toBe(1)
    await carolRow.getByRole("button", { name: "Adjust balance…" }).click()
    await carolRow.getByLabel("Amount in R$ (negative to debit)").fill("12,34")
    await carolRow.getByLabel("Reason").fill("goodwill credit")
    await carolRow.getByRole("button", { name: `Adjust by ${money(1_234)}` }).click()
    await answerConfirmation(page, ["e2e-carol", money(1_234), money(3_000), money(4_234), "goodwill credit"], common.in("en").cancel)
    expect((await ok(players.carol!.session, "GET", "/api/auth/me")).balanceCents).toBe(3_000)
    await carolRow.getByRole("button", { name: `Adjust by ${money(1_234)}` }).click()
    await answerConfirmation(page, ["e2e-carol", money(1_234)], `Adjust by ${money(1_234)}`)
    await expect.poll(() => carolRow.getByTestId("balance").textContent()).toBe(money(4_234))
    expect((await ok(players.carol!.session, "GET", "/api/auth/me")).balanceCents).toBe(4_234)

    // Catalog: a new case, its return to player shown before saving and as the API computes it after.
    await page.getByRole("link", { name: "Catalog" }).click()
    await page.getByTestId("cases").waitFor()
    await photograph(page, "catalog")
    const items = ((await ok(admin, "GET", "/api/admin/items?limit=100")).items as Array<
      { id: string; name: string; valueCents: number }
    >).sort((a, b) => a.valueCents - b.valueCents)
    const [cheap, dear] = [items[0]!, items[items.length - 1]!]
    const priceCents = Math.ceil(((cheap.valueCents * 0.9 + dear.valueCents * 0.1) / 0.85) / 100) * 100
    await page.getByRole("button", { name: c.newCase }).click()
    const form = page.getByTestId("new-case")
    await form.getByLabel(c.name).fill("E2E Case")
    await form.getByLabel(c.slug).fill("e2e-case")
    await form.getByLabel(c.imageUrl).fill("https://cdn.example.com/cases/e2e-case.png")
    await form.getByLabel(c.priceReais).fill(String(priceCents / 100))
    for (const [it, chance] of [[cheap, "0.9"], [dear, "0.1"]] as const) {
      await form.locator(`input[name="item-${it.id}"]`).check()
      await form.getByLabel(c.dropChanceOf(it.name)).fill(chance)
    }
    const expectedRtp = (cheap.valueCents * 0.9 + dear.valueCents * 0.1) / priceCents
    await expect.poll(() => form.getByTestId("rtp-preview").textContent()).toContain(percent(expectedRtp))
    await photograph(page, "catalog-new-case")
    await form.getByRole("button", { name: c.createCase }).click()
    const created = page.locator(`tr[data-slug="e2e-case"]`)
    await created.waitFor()
    const saved = ((await ok(admin, "GET", "/api/admin/cases?limit=100")).cases as Array<{ slug: string; rtp: number }>)
      .find((c) => c.slug === "e2e-case")!
    expect(saved.rtp).toBeCloseTo(expectedRtp, 4)
    expect(await created.getByTestId("rtp").textContent()).toBe(percent(saved.rtp))
    // Deactivated from the console; the public list no longer has it.
    await created.getByRole("button", { name: c.deactivate }).click()
    await expect.poll(() => created.getByTestId("status").textContent()).toBe(c.inactive)

    expect(errors).toEqual([])
    await context.close()
  }, 180_000)

  it("the dashboard says what each figure counts and the zone of its days; n/a without a base; activity in words; the chart in pt-BR", async () => {
    // In Portuguese: the words are text/dashboard.ts's pt-BR table, the figures pt-BR's.
    const d = dashboard.in("pt-BR")
    const money = (cents: number) => moneyIn(cents, "pt-BR")
    const admin = await devSessionAt(base, ADMIN)
    const session = await devSessionAt(base, "e2e-gina")
    const gina = (await ok(session, "GET", "/api/auth/me")) as { id: string }
    await ok(admin, "POST", `/api/admin/users/${gina.id}/adjust-balance`, { amountCents: 10_000, reason: "e2e" })
    const requested = await ok(session, "POST", "/api/withdrawals/request", {
      amountCents: 1_500,
      paymentMethod: "PIX",
      paymentDetails: { pixKeyType: "EMAIL", pixKey: "gina@example.com" }
    })

    const context = await newContext("pt-BR")
    const page = await context.newPage()
    const errors: Array<string> = []
    watch(page, errors)
    await signIn(page, ADMIN)
    await page.goto(`${base}/admin`)
    await page.getByTestId("stats").waitFor()
    const stats = await ok(admin, "GET", "/api/admin/dashboard")
    const chart = await ok(admin, "GET", "/api/admin/dashboard/revenue-chart?period=7d") as {
      timezone: string
      data: Array<{ date: string; revenue: number; profit: number; deposits: number; withdrawals: number }>
      summary: { growthRate: number }
    }

    // The zone of the days, as the API names it, with today's date there.
    const today = new Intl.DateTimeFormat("pt-BR", { dateStyle: "short", timeZone: stats.timezone }).format(new Date())
    const zone = page.getByTestId("business-timezone")
    expect(await zone.getAttribute("data-zone")).toBe(stats.timezone)
    expect(await zone.textContent()).toContain(`${d.zone.daysIn} ${stats.timezone}${d.zone.today(today)}`)
    expect(await page.getByTestId("chart-timezone").textContent()).toBe(d.chartDays("7", chart.timezone))

    // A new service: every account was created today, so nobody was active yesterday and no revenue came
    // before this week. The API answers 0 for both; the page says n/a.
    expect([stats.users.total, stats.users.growth, chart.summary.growthRate]).toEqual([stats.users.newToday, 0, 0])
    expect(stats.users.activeToday).toBeGreaterThan(0)
    expect(await page.getByTestId("stat-users.growth").textContent()).toBe(d.notApplicable)
    expect(await page.getByTestId("chart-growth").textContent()).toBe(d.notApplicable)

    // Every card says what it counts, under the value and at length in its tooltip; the withdrawals are SPEC's
    // (completed), the chart's are requests, and the page says so.
    const cardIds = await page.locator("[data-testid=stats] article").evaluateAll((cards) =>
      cards.map((c) => c.getAttribute("data-testid")!.slice("card-".length))
    )
    expect(cardIds.length).toBe(16)
    for (const id of cardIds) {
      expect((await page.getByTestId(`hint-${id}`).textContent())!.length, id).toBeGreaterThan(5)
      expect((await page.getByTestId(`card-${id}`).getAttribute("title"))!.length, id).toBeGreaterThan(10)
    }
    expect(await page.getByTestId("hint-financial.withdrawalsToday").textContent())
      .toBe(d.cards["financial.withdrawalsToday"].hint)
    expect(await page.getByTestId("hint-financial.profitToday").textContent()).toBe(d.cards["financial.profitToday"].hint)
    expect(await page.getByTestId("withdrawals-note").textContent()).toBe(d.withdrawalsNote)
    const notes = page.getByTestId("series-notes")
    expect(await notes.locator("li").evaluateAll((items) => items.map((i) => i.getAttribute("data-series"))))
      .toEqual(["revenue", "profit", "deposits", "withdrawals"])
    for (const key of ["revenue", "profit", "deposits", "withdrawals"] as const) {
      expect((await notes.locator(`li[data-series=${key}]`).textContent())!.trim())
        .toBe(`${d.series[key].label}: ${d.series[key].counts}`)
    }

    // The recent activity's types in words.
    const activity = page.locator(`[data-testid=activity] tr[data-id="WITHDRAWAL_REQUEST:${requested.id}"]`)
    expect(await activity.getByTestId("activity-type").textContent()).toBe(d.activityTypes.WITHDRAWAL_REQUEST)

    // The chart: day and money ticks as the page writes them (dd/mm, R$), its legend the series' labels and,
    // under the cursor, the day's figures in pt-BR.
    const dayMonth = (date: string) => `${date.slice(8, 10)}/${date.slice(5, 7)}`
    const plot = page.getByTestId("chart")
    await expect.poll(() => plot.getAttribute("data-x-ticks")).not.toBeNull()
    const xTicks = (await plot.getAttribute("data-x-ticks"))!.split("|")
    expect(xTicks.length).toBeGreaterThan(0)
    for (const tick of xTicks) expect(chart.data.map((d) => dayMonth(d.date))).toContain(tick)
    const yTicks = (await plot.getAttribute("data-y-ticks"))!.split("|")
    expect(yTicks.length).toBeGreaterThan(1)
    for (const tick of yTicks) expect(tick).toMatch(/^-?R\$\u00a0\d{1,3}(\.\d{3})*(,\d{1,2})?( mil| mi)?$/)
    const legend = plot.locator(".u-legend tr.u-series")
    expect(await legend.locator("th").allTextContents())
      .toEqual([d.day, ...(["revenue", "profit", "deposits", "withdrawals"] as const).map((k) => d.series[k].label)])
    await plot.locator(".u-over").hover()
    await expect.poll(() => legend.first().locator(".u-value").textContent()).toMatch(/\d{2}\/\d{2}\/\d{4}$/)
    const shownDay = (await legend.first().locator(".u-value").textContent())!
    const fullDay = new Intl.DateTimeFormat("pt-BR", {
      weekday: "short",
      day: "2-digit",
      month: "2-digit",
      year: "numeric",
      timeZone: "UTC"
    })
    const point = chart.data.find((d) => fullDay.format(new Date(`${d.date}T00:00:00Z`)) === shownDay)
    expect(point, shownDay).toBeDefined()
    expect(await legend.locator(".u-value").allTextContents()).toEqual([
      shownDay,
      money(point!.revenue),
      money(point!.profit),
      money(point!.deposits),
      money(point!.withdrawals)
    ])
    await photograph(page, "dashboard-figures")

    expect(errors).toEqual([])
    await context.close()
  }, 120_000)

  it("a player page, reached from the users list, shows their money history in pages and ends a session; the audit log filters", async () => {
    const admin = await devSessionAt(base, ADMIN)
    const session = await devSessionAt(base, "e2e-frank")
    const frank = (await ok(session, "GET", "/api/auth/me")) as { id: string; username: string }
    // Eleven adjustments, an opening, a withdrawal request and a pending deposit: more ledger rows than a page holds.
    await ok(admin, "POST", `/api/admin/users/${frank.id}/adjust-balance`, { amountCents: 100_000, reason: "e2e start" })
    for (let i = 1; i <= 10; i++) {
      await ok(admin, "POST", `/api/admin/users/${frank.id}/adjust-balance`, { amountCents: i, reason: `e2e ${i}` })
    }
    const { cases } = await ok(admin, "GET", "/api/cases")
    const opened = await ok(session, "POST", `/api/cases/${cases[0].id}/open`)
    const withdrawal = await ok(session, "POST", "/api/withdrawals/request", {
      amountCents: 4_000,
      paymentMethod: "PIX",
      paymentDetails: { pixKeyType: "EMAIL", pixKey: "frank@example.com" }
    })
    const deposit = await ok(session, "POST", "/api/payment/deposit/initiate", { amountCents: 2_500, method: "PIX" })
    const ledger = await ok(admin, "GET", `/api/admin/users/${frank.id}/transactions?limit=100`)
    expect(ledger.total).toBe(13)
    const profile = await ok(admin, "GET", `/api/admin/users/${frank.id}`)

    const context = await newContext("en")
    const page = await context.newPage()
    const errors: Array<string> = []
    watch(page, errors)
    await signIn(page, ADMIN)
    await page.goto(`${base}/admin/users`)
    await page.getByLabel("Search users").fill("e2e-frank")
    await page.getByRole("button", { name: "Search" }).click()
    await expect.poll(() => page.locator("[data-testid=users] tbody tr").count()).toBe(1)
    await page.locator(`tr[data-username="e2e-frank"]`).getByTestId("user-link").click()
    await page.waitForURL(`${base}/admin/users/${frank.id}`)
    await expect.poll(() => page.getByTestId("player-name").textContent()).toBe("e2e-frank")
    expect(await page.getByTestId("player-balance").textContent()).toBe(money(Number(profile.balanceCents)))
    expect(await page.getByTestId("player-identity").textContent()).toBe("not verified")
    expect(await page.getByTestId("player-exclusion").textContent()).toBe("none")
    await photograph(page, "player")

    // The ledger: ten rows, then the other three; the newest first, as the API has them.
    const ledgerRows = page.locator("[data-testid=transactions] tbody tr")
    await expect.poll(() => ledgerRows.count()).toBe(10)
    expect(await page.getByTestId("pager-summary").textContent()).toBe("1–10 of 13 · page 1 of 2")
    expect(await ledgerRows.first().getAttribute("data-id")).toBe(ledger.transactions[0].id)
    await page.getByRole("button", { name: "Next ›" }).click()
    await expect.poll(() => ledgerRows.count()).toBe(3)
    expect(await page.getByTestId("pager-summary").textContent()).toBe("11–13 of 13 · page 2 of 2")
    expect(await ledgerRows.last().getAttribute("data-id")).toBe(ledger.transactions[12].id)
    await page.getByRole("button", { name: "‹ Previous" }).click()
    await expect.poll(() => ledgerRows.count()).toBe(10)

    // Its deposits, withdrawals, openings and audit entries.
    await page.getByRole("tab", { name: /^Deposits/ }).click()
    await expect.poll(() => page.locator(`[data-testid=deposits] tr[data-id="${deposit.depositId}"] [data-testid=status]`).textContent())
      .toBe("PENDING")
    await page.getByRole("tab", { name: /^Withdrawals/ }).click()
    await expect.poll(() => page.locator(`[data-testid=withdrawals] tr[data-id="${withdrawal.id}"] td`).nth(1).textContent())
      .toBe(money(4_000))
    await page.getByRole("tab", { name: /^Openings/ }).click()
    await expect.poll(() => page.locator(`[data-testid=openings] tr[data-id="${opened.openingId}"] td`).nth(2).textContent())
      .toContain(opened.item.name)
    await page.getByRole("tab", { name: /^Audit/ }).click()
    const actions = () =>
      page.locator("[data-testid=audit] [data-testid=action]").evaluateAll((cells) => cells.map((c) => c.getAttribute("data-action")))
    await expect.poll(actions).toContain("WITHDRAWAL_REQUESTED")
    expect(await page.locator(`[data-testid=audit] [data-action=WITHDRAWAL_REQUESTED]`).first().textContent())
      .toBe(audit.in("en").actions.WITHDRAWAL_REQUESTED)

    // Frank's one session, ended from here: his next request is refused.
    const sessionRows = page.locator("[data-testid=sessions] tbody tr")
    expect(await sessionRows.count()).toBe(1)
    expect(await sessionRows.first().getAttribute("data-id")).toBe(profile.sessions[0].id)
    await sessionRows.first().getByRole("button", { name: "Revoke" }).click()
    await page.getByTestId("no-sessions").waitFor()
    expect((await call(session, "GET", "/api/auth/me")).status).toBe(401)

    // The audit log: narrowed to one action and this user; the revocation names the administrator.
    await page.getByRole("link", { name: "Open in the audit log (with filters)" }).click()
    await page.waitForURL(`${base}/admin/audit?userId=${frank.id}`)
    await page.getByTestId("audit").waitFor()
    const filters = page.getByTestId("audit-filters")
    const a = audit.in("en")
    const inAll = common.in("en").inAll
    expect(await filters.getByLabel(a.userId).inputValue()).toBe(frank.id)
    await filters.getByLabel(a.action).selectOption("ADMIN_ADJUST_BALANCE")
    await filters.getByRole("button", { name: a.filter }).click()
    await expect.poll(() => page.getByTestId("pager-summary").textContent()).toBe(inAll("11"))
    expect(new Set(await actions())).toEqual(new Set(["ADMIN_ADJUST_BALANCE"]))
    await filters.getByLabel(a.action).selectOption("SESSION_REVOKED")
    await filters.getByRole("button", { name: a.filter }).click()
    await expect.poll(() => page.getByTestId("pager-summary").textContent()).toBe(inAll("1"))
    expect(await page.locator("[data-testid=audit] [data-testid=actor]").textContent()).toBe(ADMIN)
    await photograph(page, "audit")
    // A day with no entries: none.
    await filters.getByLabel(a.to).fill("2000-01-01")
    await filters.getByRole("button", { name: a.filter }).click()
    await expect.poll(() => page.getByTestId("pager-summary").textContent()).toBe(inAll("0"))

    expect(errors).toEqual([])
    await context.close()
  }, 120_000)

  it("signing in from a console page returns to that page", async () => {
    const context = await newContext("en")
    const page = await context.newPage()
    const errors: Array<string> = []
    watch(page, errors)
    await page.goto(`${base}/admin/audit`)
    await page.getByTestId("signed-out").waitFor()
    await page.getByRole("button", { name: consoleText.in("en").signIn }).click()
    await page.locator("input[name=login]").fill(ADMIN)
    await page.getByRole("button", { name: "Sign in" }).click() // the identity provider's own form
    await page.waitForURL(`${base}/admin/audit`)
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe(audit.in("en").title)
    // Once: the start page stays the start page afterwards.
    await page.goto(`${base}/`)
    await expect.poll(() => page.getByTestId("username").textContent()).toBe(ADMIN)
    expect(page.url()).toBe(`${base}/`)
    expect(errors).toEqual([])
    await context.close()
  }, 60_000)

  it("an administrator with 2FA approves a withdrawal only with a current code", async () => {
    const admin = await devSessionAt(base, ADMIN)
    const guarded = await devSessionAt(base, ADMIN_WITH_2FA)
    const secret = await turnOnTwoFactor(guarded)
    const player = await devSessionAt(base, "e2e-erin")
    const erin = await ok(player, "GET", "/api/auth/me")
    await ok(admin, "POST", `/api/admin/users/${erin.id}/adjust-balance`, { amountCents: 9_000, reason: "e2e" })
    const requested = await ok(player, "POST", "/api/withdrawals/request", {
      amountCents: 2_500,
      paymentMethod: "PIX",
      paymentDetails: { pixKeyType: "EMAIL", pixKey: "erin@example.com" }
    })

    const context = await newContext("en")
    const page = await context.newPage()
    const errors: Array<string> = []
    watch(page, errors, [new RegExp(`^/api/admin/withdrawals/${requested.id}/approve$`)])
    await signIn(page, ADMIN_WITH_2FA)
    await page.goto(`${base}/admin/withdrawals`)
    const row = page.locator(`tr[data-id="${requested.id}"]`)
    await row.getByRole("button", { name: "Approve" }).click()
    await answerConfirmation(page, [money(2_500), "e2e-erin"], `Approve ${money(2_500)}`)
    await expect.poll(() => page.getByRole("alert").textContent()).toBe("2FA code required")
    expect(await row.getByTestId("status").textContent()).toBe("PENDING")
    await page.getByLabel(consoleText.in("en").twoFactorCode).fill(authenticator.generate(secret))
    await row.getByRole("button", { name: "Approve" }).click()
    await answerConfirmation(page, [money(2_500), "e2e-erin"], `Approve ${money(2_500)}`)
    await expect.poll(() => row.getByTestId("status").textContent()).toBe("COMPLETED")
    expect((await ok(player, "GET", "/api/auth/me")).balanceCents).toBe(6_500)
    expect(errors).toEqual([])
    await context.close()
  }, 60_000)

  it("a player sees their balance at / and the refusal at /admin", async () => {
    const context = await newContext("en")
    const page = await context.newPage()
    const errors: Array<string> = []
    watch(page, errors)
    await signIn(page, "e2e-player")
    await expect.poll(() => page.getByTestId("balance").textContent()).toBe(money(0))
    expect(await page.getByTestId("console-link").count()).toBe(0)
    await page.goto(`${base}/admin/withdrawals`)
    await page.getByTestId("admins-only").waitFor()
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe(consoleText.in("en").adminsOnly)
    await photograph(page, "admins-only")
    await page.goto(`${base}/`)
    await page.getByRole("button", { name: home.in("en").signOut }).click()
    await page.getByTestId("sign-in").waitFor()
    expect(errors).toEqual([])
    await context.close()
  }, 60_000)

  it("a form on a sibling origin of the same site cannot open a case with the player's cookie; our own page can", async () => {
    const admin = await devSessionAt(base, ADMIN)
    const context = await newContext("en")
    const page = await context.newPage()
    await signIn(page, "e2e-victim")
    const meInPage = () => page.evaluate(async () => (await fetch("/api/auth/me")).json() as Promise<{ id: string; balanceCents: number }>)
    const victim = await meInPage()
    await ok(admin, "POST", `/api/admin/users/${victim.id}/adjust-balance`, { amountCents: 100_000, reason: "e2e" })
    const { cases } = await ok(admin, "GET", "/api/cases")
    const opening = `/api/cases/${cases[0].id}/open`
    // The attacker's page: http://localhost:<another port>, the same site as the service (ports do not make
    // sites), so SameSite=Lax lets the session cookie go with its form.
    const attacker = createHttpServer((_, response) => {
      response.setHeader("content-type", "text/html")
      response.end(`<form method="post" action="${base}${opening}"></form><script>document.forms[0].submit()</script>`)
    })
    const attackerPort = await freePort()
    await new Promise<void>((resolve) => attacker.listen(attackerPort, "127.0.0.1", resolve))
    try {
      await page.goto(`http://localhost:${attackerPort}/`)
      await page.waitForURL(`${base}${opening}`)
      expect(JSON.parse(await page.locator("body").innerText())).toEqual({ statusCode: 403, message: "Cross-site request refused" })
    } finally {
      attacker.close()
    }
    await page.goto(`${base}/`)
    expect((await meInPage()).balanceCents).toBe(100_000)
    // The same request from our own page goes through.
    expect(await page.evaluate(async (path) => (await fetch(path, { method: "POST" })).status, opening)).toBe(200)
    expect((await meInPage()).balanceCents).toBeLessThan(100_000)
    await context.close()
  }, 60_000)

  it("the catalog: an item created, then revalued after a confirmation naming the cases it pushes over; a case's chances edited with its RTP before and after saving; the house edge as 1 − RTP beside the minimum", async () => {
    const admin = await devSessionAt(base, ADMIN)
    type AdminItem = { id: string; name: string; rarity: string; valueCents: number; imageUrl: string; isUpgradable: boolean }
    type AdminCase = { id: string; rtp: number; items: Array<{ itemId: string; dropChance: number }> }
    const everyItem = async () => {
      const all: Array<AdminItem> = []
      for (let p = 1; ; p++) {
        const { items, total } = await ok(admin, "GET", `/api/admin/items?page=${p}&limit=100`)
        all.push(...items)
        if (items.length === 0 || all.length >= total) return all
      }
    }
    const overAlerts = async () =>
      ((await ok(admin, "GET", "/api/admin/dashboard/alerts")).alerts as Array<{ id: string }>).map((a) => a.id)

    const context = await newContext("en")
    const page = await context.newPage()
    const errors: Array<string> = []
    // The case editor's refusals (422) are provoked on purpose.
    watch(page, errors, [/^\/api\/admin\/cases\/\d+$/])
    await signIn(page, ADMIN)
    await page.goto(`${base}/admin/catalog`)
    await page.getByTestId("cases").waitFor()

    // A new item from the console, as the API then has it.
    await page.getByRole("button", { name: c.newItem }).click()
    const newItem = page.getByTestId("item-editor")
    await newItem.getByLabel(c.name, { exact: true }).fill("E2E Ruby")
    await newItem.getByLabel(new RegExp(`^${c.columns.rarity}`)).selectOption("COVERT")
    await newItem.getByLabel(c.valueReais, { exact: true }).fill("12.50")
    await newItem.getByLabel(c.imageUrl, { exact: true }).fill("https://cdn.example.com/items/e2e-ruby.png")
    await newItem.getByLabel(c.upgradableLabel).uncheck()
    await photograph(page, "catalog-new-item")
    await newItem.getByRole("button", { name: c.createItem }).click()
    const rubyRow = page.locator(`[data-testid=items] tr[data-name="E2E Ruby"]`)
    await rubyRow.waitFor()
    expect(await page.getByRole("status").textContent()).toBe(c.createdItem("E2E Ruby", "COVERT", money(1_250)))
    const ruby = (await everyItem()).find((i) => i.name === "E2E Ruby")!
    expect(ruby).toMatchObject({
      rarity: "COVERT",
      valueCents: 1_250,
      imageUrl: "https://cdn.example.com/items/e2e-ruby.png",
      isUpgradable: false
    })
    expect(await rubyRow.getByTestId("value").textContent()).toBe(money(1_250))

    // A case holding it, returning about half its price (house edge at least 10 %).
    const cheap = (await everyItem()).filter((i) => i.id !== ruby.id).sort((a, b) => a.valueCents - b.valueCents)[0]!
    const priceCents = Math.ceil((0.9 * cheap.valueCents + 0.1 * 1_250) * 2 / 100) * 100
    const kase = (await ok(admin, "POST", "/api/admin/cases", {
      name: "E2E Ruby Case",
      slug: "e2e-ruby-case",
      imageUrl: "https://cdn.example.com/cases/e2e-ruby-case.png",
      priceCents,
      houseEdge: 0.1,
      items: [{ itemId: cheap.id, dropChance: 0.9 }, { itemId: ruby.id, dropChance: 0.1 }]
    })) as AdminCase
    expect(kase.rtp).toBeLessThan(0.9)
    await page.reload()
    const caseRow = page.locator(`[data-testid=cases] tr[data-slug="e2e-ruby-case"]`)
    await caseRow.waitFor()
    // The return to player and the house edge as 1 − RTP add up; the configured minimum beside them.
    expect([
      await caseRow.getByTestId("rtp").textContent(),
      await caseRow.getByTestId("edge").textContent(),
      await caseRow.getByTestId("edge-limit").textContent()
    ]).toEqual([percent(kase.rtp), percent(1 - kase.rtp), percent(0.1)])

    // Revalued so that the case pays back over 95 %: the editor names it before saving, the confirmation too.
    const newValue = Math.ceil((0.95 * priceCents - 0.9 * cheap.valueCents) * 10 / 100) * 100 + 100
    await rubyRow.getByRole("button", { name: c.edit }).click()
    const editor = page.getByTestId("item-editor")
    expect(await editor.getByLabel(c.valueReais, { exact: true }).inputValue()).toBe("12.50")
    await editor.getByLabel(c.valueReais, { exact: true }).fill(`${newValue / 100}.00`)
    const impact = editor.locator(`[data-testid=item-impact] li[data-case="e2e-ruby-case"]`)
    await expect.poll(() => impact.getAttribute("data-pushed")).toBe("true")
    expect(await impact.textContent()).toContain(percent(kase.rtp))
    await photograph(page, "catalog-edit-item")
    await editor.getByRole("button", { name: c.saveItem }).click()
    await answerConfirmation(page, ["E2E Ruby", money(newValue), "E2E Ruby Case"], common.in("en").cancel)
    expect((await everyItem()).find((i) => i.id === ruby.id)!.valueCents).toBe(1_250)
    await editor.getByRole("button", { name: c.saveItem }).click()
    await answerConfirmation(page, ["E2E Ruby", money(newValue), "E2E Ruby Case"], c.saveValue(money(newValue)))
    await expect.poll(() => page.getByRole("status").textContent())
      .toBe(c.savedItem("E2E Ruby", money(newValue)) + c.pushedCases("E2E Ruby Case"))
    expect((await everyItem()).find((i) => i.id === ruby.id)!.valueCents).toBe(newValue)
    const over = (await ok(admin, "GET", `/api/admin/cases/${kase.id}`)) as AdminCase
    expect(over.rtp).toBeGreaterThan(0.9)
    expect(await overAlerts()).toContain(`case-over-house-edge:${kase.id}`)
    await expect.poll(() => caseRow.getByTestId("rtp").textContent()).toBe(percent(over.rtp))
    expect(await caseRow.getByTestId("edge").textContent()).toBe(`${percent(1 - over.rtp)}${c.belowMinimum}`)
    expect(await rubyRow.getByTestId("value").textContent()).toBe(money(newValue))

    // The case's chances: the RTP follows them as they are typed; the API's refusals are shown by field.
    await caseRow.getByRole("button", { name: c.edit }).click()
    const caseEditor = page.getByTestId("case-editor")
    const preview = caseEditor.getByTestId("rtp-preview")
    expect(await caseEditor.getByTestId("rtp-saved").textContent()).toBe(percent(over.rtp))
    expect(Number(await preview.getAttribute("data-rtp"))).toBe(over.rtp)
    const chanceOf = (name: string) => caseEditor.getByLabel(c.dropChanceOf(name), { exact: true })
    // Chances that leave rolls uncovered: 422 on the items.
    await chanceOf("E2E Ruby").fill("0.05")
    await expect.poll(() => preview.textContent()).toContain(c.chancesAddUp("0.95"))
    await caseEditor.getByRole("button", { name: c.saveCase }).click()
    await expect.poll(() => caseEditor.getByTestId("case-error-items").isVisible()).toBe(true)
    // Over the house edge as saved: 422 with the figures, each by its field.
    await chanceOf("E2E Ruby").fill("0.1")
    await caseEditor.getByRole("button", { name: c.saveCase }).click()
    await expect.poll(() => caseEditor.getByTestId("case-error-economics").textContent()).toContain("1 - houseEdge")
    expect(await caseEditor.getByTestId("case-error-houseEdge").textContent()).toContain("0.1")
    expect(await caseEditor.getByTestId("case-error-promotional").textContent()).toContain("promotional true")
    expect(await caseEditor.getByTestId("case-error-items").count()).toBe(0)
    expect(await caseEditor.getByRole("alert").textContent()).toBe("Case pays back more than its house edge allows")
    await photograph(page, "catalog-edit-case")
    // Under the line again: the estimate before saving is the API's figure after.
    await chanceOf(cheap.name).fill("0.99")
    await chanceOf("E2E Ruby").fill("0.01")
    const expected = (0.99 * cheap.valueCents + 0.01 * newValue) / priceCents
    await expect.poll(async () => Number(await preview.getAttribute("data-rtp"))).toBeCloseTo(expected, 4)
    const before = Number(await preview.getAttribute("data-rtp"))
    expect(await caseEditor.getByTestId("rtp-estimate").textContent()).toBe(percent(before))
    expect(await preview.getAttribute("data-over")).toBe("false")
    await caseEditor.getByRole("button", { name: c.saveCase }).click()
    await caseEditor.waitFor({ state: "detached" })
    const saved = (await ok(admin, "GET", `/api/admin/cases/${kase.id}`)) as AdminCase
    expect(saved.rtp).toBe(before)
    expect(Object.fromEntries(saved.items.map((i) => [i.itemId, i.dropChance]))).toEqual({ [cheap.id]: 0.99, [ruby.id]: 0.01 })
    expect(await page.getByRole("status").textContent())
      .toBe(c.savedCase("E2E Ruby Case", percent(saved.rtp), percent(over.rtp)))
    await expect.poll(() => caseRow.getByTestId("rtp").textContent()).toBe(percent(saved.rtp))
    expect(await caseRow.getByTestId("edge").textContent()).toBe(percent(1 - saved.rtp))
    expect(await overAlerts()).not.toContain(`case-over-house-edge:${kase.id}`)

    // Out of the public catalog again, as the other tests found it.
    await ok(admin, "PUT", `/api/admin/cases/${kase.id}`, { isActive: false })
    expect(errors).toEqual([])
    await context.close()
  }, 120_000)

  it("a payout the gateway did not answer stays PROCESSING; Reconcile asks the gateway and shows what it found", async () => {
    // A second service whose payment gateway is this test's: a payout gets no answer (503, after the retries), and
    // the status of a payout is what the test sets (404 until then: never received).
    const statuses = new Map<string, { status: "PROCESSING" | "PAID" | "FAILED"; failReason?: string }>()
    const asked: Array<string> = []
    const gateway = createHttpServer((request, response) => {
      request.resume()
      asked.push(`${request.method} ${request.url}`)
      response.setHeader("content-type", "application/json")
      const query = /^\/payouts\/(withdrawal-\d+)$/.exec(request.url ?? "")
      if (request.method === "GET" && query !== null) {
        const known = statuses.get(query[1]!)
        response.statusCode = known === undefined ? 404 : 200
        response.end(JSON.stringify(known === undefined ? { message: "Not found" } : { id: `po_e2e_${query[1]}`, ...known }))
        return
      }
      response.statusCode = 503
      response.end(JSON.stringify({ message: "Unavailable" }))
    })
    const gatewayPort = await freePort()
    await new Promise<void>((resolve) => gateway.listen(gatewayPort, "127.0.0.1", resolve))
    const second = await startService({
      PAYMENT_GATEWAY_URL: `http://127.0.0.1:${gatewayPort}`,
      PAYMENT_GATEWAY_KEY: "e2e-gateway-key-that-is-long-enough-0123456789"
    })
    // The helpers (signIn, watch, ok) speak to `base`: the second service until the end of this test.
    const main = switchService(second.url)
    let context: BrowserContext | undefined
    try {
      const admin = await devSessionAt(base, ADMIN)
      const player = await devSessionAt(base, "e2e-henry")
      const henry = (await ok(player, "GET", "/api/auth/me")) as { id: string }
      await ok(admin, "POST", `/api/admin/users/${henry.id}/adjust-balance`, { amountCents: 10_000, reason: "e2e" })
      const request = (amountCents: number) =>
        ok(player, "POST", "/api/withdrawals/request", {
          amountCents,
          paymentMethod: "PIX",
          paymentDetails: { pixKeyType: "EMAIL", pixKey: "henry@example.com" }
        })
      const paid = await request(3_000)
      const failed = await request(2_000)
      // One approved by the API, unanswered: PROCESSING.
      expect((await ok(admin, "POST", `/api/admin/withdrawals/${failed.id}/approve`)).status).toBe("PROCESSING")

      context = await newContext("en")
      const page = await context.newPage()
      const errors: Array<string> = []
      watch(page, errors)
      await signIn(page, ADMIN)
      await page.goto(`${base}/admin/withdrawals`)
      // The other approved from the console: the gateway does not answer, the row says PROCESSING and offers Reconcile.
      const paidRow = page.locator(`tr[data-id="${paid.id}"]`)
      await paidRow.getByRole("button", { name: "Approve" }).click()
      await answerConfirmation(page, [money(3_000), "e2e-henry"], `Approve ${money(3_000)}`)
      // Its retries take a few seconds.
      await expect.poll(() => paidRow.getByTestId("status").textContent(), { timeout: 20_000 }).toMatch(/^PROCESSING/)
      expect(asked.filter((a) => a === "POST /payouts").length).toBeGreaterThanOrEqual(2)
      await paidRow.getByRole("button", { name: "Reconcile" }).waitFor()

      // The PROCESSING list, one click away.
      await page.getByRole("button", { name: "Refresh" }).click()
      await expect.poll(() => page.getByTestId("processing-hint").textContent()).toContain("2 payout(s) PROCESSING")
      await page.getByRole("link", { name: "Show them" }).click()
      const rows = page.locator("[data-testid=withdrawals] tbody tr")
      await expect.poll(() => rows.count()).toBe(2)
      const paidNow = page.locator(`tr[data-id="${paid.id}"]`)
      const failedNow = page.locator(`tr[data-id="${failed.id}"]`)
      await photograph(page, "withdrawals-processing")

      // Still processing at the gateway: unchanged, and the page says so.
      statuses.set(`withdrawal-${paid.id}`, { status: "PROCESSING" })
      await paidNow.getByRole("button", { name: "Reconcile" }).click()
      await expect.poll(() => paidNow.getByTestId("reconcile-outcome").textContent()).toContain("still PROCESSING")
      expect(await paidNow.getByTestId("status").textContent()).toMatch(/^PROCESSING/)
      expect(asked).toContain(`GET /payouts/withdrawal-${paid.id}`)
      // Paid: COMPLETED.
      statuses.set(`withdrawal-${paid.id}`, { status: "PAID" })
      await paidNow.getByRole("button", { name: "Reconcile" }).click()
      await expect.poll(() => paidNow.getByTestId("status").textContent()).toMatch(/^COMPLETED/)
      expect(await paidNow.getByTestId("reconcile-outcome").textContent()).toBe("the gateway paid it: COMPLETED")
      expect(await page.getByRole("status").textContent()).toBe(`e2e-henry's withdrawal of ${money(3_000)}: the gateway paid it: COMPLETED`)
      // Failed: FAILED, the amount back in the balance.
      statuses.set(`withdrawal-${failed.id}`, { status: "FAILED", failReason: "Account closed" })
      await failedNow.getByRole("button", { name: "Reconcile" }).click()
      await expect.poll(() => failedNow.getByTestId("status").textContent()).toMatch(/^FAILED/)
      expect(await failedNow.getByTestId("reconcile-outcome").textContent()).toContain("FAILED, the amount returned")
      await photograph(page, "withdrawals-reconciled")

      const byId = Object.fromEntries(
        ((await ok(admin, "GET", "/api/admin/withdrawals?limit=100")).withdrawals as Array<{ id: string; status: string }>)
          .map((w) => [w.id, w.status])
      )
      expect([byId[paid.id], byId[failed.id]]).toEqual(["COMPLETED", "FAILED"])
      expect((await ok(player, "GET", "/api/auth/me")).balanceCents).toBe(7_000)
      expect(errors).toEqual([])
    } finally {
      switchService(main)
      await context?.close()
      await second.stop()
      gateway.close()
    }
  }, 120_000)

  languageScenarios()
  peopleScenarios()
})
