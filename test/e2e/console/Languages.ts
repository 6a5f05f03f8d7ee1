/**
 * The console and the start page in Brazilian Portuguese and in English (registered by Console.test.ts): the first
 * visit follows the browser's language, the switch changes every text in place and is remembered; no English text of
 * the pages' tables shows in Portuguese; money, numbers and dates (the chart's axes too) are the language's. And
 * editing an item's value with 2FA on needs a current code.
 */
import { expect, it } from "vitest"
import { authenticator } from "otplib"
import type { Page } from "playwright-core"
import {
  ADMIN,
  answerConfirmation,
  base,
  CATALOG_ADMIN_WITH_2FA,
  money,
  newContext,
  ok,
  photograph,
  signIn,
  turnOnTwoFactor,
  watch
} from "../../support/ConsoleBrowser"
import { devSessionAt } from "../../support/DevSignIn"
import { audit } from "../../../web/src/admin/text/audit"
import { catalog } from "../../../web/src/admin/text/catalog"
import { consoleText } from "../../../web/src/admin/text/console"
import { dashboard } from "../../../web/src/admin/text/dashboard"
import { common } from "../../../web/src/text/common"
import { home } from "../../../web/src/text/home"

type Locale = "pt-BR" | "en"
interface Table {
  readonly in: (locale: Locale) => unknown
}

/** Every string of a text table (its functions left out: what they make holds names and figures). */
const strings = (value: unknown): Array<string> =>
  typeof value === "string"
    ? [value]
    : value !== null && typeof value === "object"
    ? Object.values(value).flatMap(strings)
    : []

/** The English strings of `tables` that Portuguese words differently (4 characters or more: no "yes", "no", "n/a"). */
const englishOnly = (tables: ReadonlyArray<Table>): Array<string> => {
  const portuguese = new Set(tables.flatMap((t) => strings(t.in("pt-BR"))))
  return [...new Set(tables.flatMap((t) => strings(t.in("en"))))].filter((s) => !portuguese.has(s) && s.trim().length >= 4)
}

/**
 * What the page shows and says: its visible text and the titles, labels and placeholders of its visible elements,
 * leaving out what is marked translate="no" (names, the API's own words).
 */
// In the page (a string: the tests' type check has no DOM).
const shownText = (page: Page): Promise<string> =>
  page.evaluate<string>(`(() => {
    const kept = (element) =>
      element !== null && element.closest("[translate=no]") === null && element.checkVisibility()
    const parts = [document.title]
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT)
    for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
      if (kept(node.parentElement)) parts.push(node.textContent ?? "")
    }
    for (const element of document.body.querySelectorAll("[title], [aria-label], [placeholder], [data-label]")) {
      if (!kept(element)) continue
      for (const name of ["title", "aria-label", "placeholder", "data-label"]) parts.push(element.getAttribute(name) ?? "")
    }
    return parts.join("\\n")
  })()`)

/** The English strings of `tables` the page shows (as whole words): none, in Portuguese. */
const englishShown = async (page: Page, tables: ReadonlyArray<Table>): Promise<Array<string>> => {
  const text = await shownText(page)
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  return englishOnly(tables).filter((s) => new RegExp(`(?<![\\p{L}\\p{N}])${escape(s)}(?![\\p{L}\\p{N}])`, "u").test(text))
}

const switchLanguage = async (page: Page, to: Locale) => {
  await page.getByTestId("language-switch").click()
  await expect.poll(() => page.evaluate<string>("document.documentElement.lang")).toBe(to)
}

/** The chart's tick labels (drawn on a canvas; the page keeps them on the element) and its legend's day. */
const chartIn = async (page: Page, locale: Locale, dates: ReadonlyArray<string>) => {
  const plot = page.getByTestId("chart")
  const d = dashboard.in(locale)
  const legend = plot.locator(".u-legend tr.u-series")
  await expect.poll(() => legend.locator("th").allTextContents())
    .toEqual([d.day, ...(["revenue", "profit", "deposits", "withdrawals"] as const).map((k) => d.series[k].label)])
  // Each day's tick as the language writes a day and month: "26/11", "11/26".
  const dayMonth = (date: string) =>
    new Intl.DateTimeFormat(locale, { day: "2-digit", month: "2-digit", timeZone: "UTC" }).format(new Date(`${date}T00:00:00Z`))
  const xTicks = (await plot.getAttribute("data-x-ticks"))!.split("|")
  expect(xTicks.length).toBeGreaterThan(0)
  for (const tick of xTicks) expect(dates.map(dayMonth)).toContain(tick)
  const yTicks = (await plot.getAttribute("data-y-ticks"))!.split("|")
  expect(yTicks.length).toBeGreaterThan(1)
  const money = locale === "pt-BR"
    ? /^-?R\$\u00a0\d{1,3}(\.\d{3})*(,\d{1,2})?( mil| mi)?$/
    : /^-?R\$\d{1,3}(,\d{3})*(\.\d{1,2})?[KM]?$/
  for (const tick of yTicks) expect(tick).toMatch(money)
  // Under the cursor, the day as the language writes it: "qui., 26/11/2026", "Thu, 11/26/2026".
  await plot.locator(".u-over").hover({ position: { x: 5, y: 5 } })
  await plot.locator(".u-over").hover()
  const fullDay = new Intl.DateTimeFormat(locale, {
    weekday: "short",
    day: "2-digit",
    month: "2-digit",
    year: "numeric",
    timeZone: "UTC"
  })
  await expect.poll(() => legend.first().locator(".u-value").textContent())
    .toBeOneOf(dates.map((date) => fullDay.format(new Date(`${date}T00:00:00Z`))))
}

export const languageScenarios = () => {
  it("Portuguese or English from the browser's language; the switch changes every text in place and is remembered; figures, dates and the chart in the language", async () => {
    const admin = await devSessionAt(base, ADMIN)
    // An item worth R$ 1.234,56 in a case of its own (Portuguese names, so no English word comes from the data),
    // and a withdrawal request for the recent activity.
    const { items } = await ok(admin, "GET", "/api/admin/items?limit=1")
    const item = await ok(admin, "POST", "/api/admin/items", {
      name: "Rubi Lapidado",
      rarity: "COVERT",
      valueCents: 123_456,
      imageUrl: "https://cdn.example.com/items/rubi.png",
      isUpgradable: true
    })
    const kase = await ok(admin, "POST", "/api/admin/cases", {
      name: "Caixa Rubi",
      slug: "caixa-rubi",
      imageUrl: "https://cdn.example.com/cases/caixa-rubi.png",
      priceCents: 200_000,
      houseEdge: 0.1,
      items: [{ itemId: items[0].id, dropChance: 0.99 }, { itemId: item.id, dropChance: 0.01 }]
    })
    const player = await devSessionAt(base, "e2e-lia")
    const lia = await ok(player, "GET", "/api/auth/me")
    await ok(admin, "POST", `/api/admin/users/${lia.id}/adjust-balance`, { amountCents: 5_000, reason: "e2e" })
    const requested = await ok(player, "POST", "/api/withdrawals/request", {
      amountCents: 1_500,
      paymentMethod: "PIX",
      paymentDetails: { pixKeyType: "EMAIL", pixKey: "lia@example.com" }
    })
    const { activities } = await ok(admin, "GET", "/api/admin/dashboard/recent-activity?limit=20")
    const activity = activities.find((a: { id: string }) => a.id === `WITHDRAWAL_REQUEST:${requested.id}`)
    const chart = await ok(admin, "GET", "/api/admin/dashboard/revenue-chart?period=7d")
    const dates = (chart.data as Array<{ date: string }>).map((d) => d.date)

    // A browser in English: the start page in English.
    const english = await newContext("en-US")
    const first = await english.newPage()
    await first.goto(`${base}/`)
    await expect.poll(() => first.getByRole("heading", { level: 1 }).textContent()).toBe(home.in("en").title)
    expect(await first.evaluate<string>("document.documentElement.lang")).toBe("en")
    expect(await first.getByTestId("sign-in").textContent()).toBe(home.in("en").signIn)
    await english.close()

    // A browser in Brazilian Portuguese: Portuguese from the first visit.
    const context = await newContext("pt-BR")
    const page = await context.newPage()
    const errors: Array<string> = []
    watch(page, errors)
    await page.goto(`${base}/`)
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe(home.in("pt-BR").title)
    expect(await page.evaluate<string>("document.documentElement.lang")).toBe("pt-BR")
    expect(await englishShown(page, [home, common])).toEqual([])
    await photograph(page, "home-signed-out-pt")
    await signIn(page, ADMIN)
    expect(await page.getByTestId("console-link").textContent()).toBe(home.in("pt-BR").openConsole)
    expect(await englishShown(page, [home, common])).toEqual([])
    await photograph(page, "home-pt")
    await switchLanguage(page, "en")
    expect(await page.getByTestId("console-link").textContent()).toBe(home.in("en").openConsole)
    // The title is set after the render (an effect): waited for.
    await expect.poll(() => page.title()).toBe(home.in("en").documentTitle)
    await photograph(page, "home-en")
    await switchLanguage(page, "pt-BR")

    // The dashboard in Portuguese: words, figures, the activity's date and the chart.
    const onDashboard = [consoleText, dashboard, common]
    await page.getByTestId("console-link").click()
    await page.getByTestId("stats").waitFor()
    await page.getByTestId("chart").locator(".u-legend").waitFor()
    const stats = await ok(admin, "GET", "/api/admin/dashboard")
    const checkDashboard = async (locale: Locale) => {
      const d = dashboard.in(locale)
      expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe(d.title)
      await expect.poll(() => page.title()).toBe(`${d.title} · Console`)
      expect(await page.getByTestId("stat-financial.revenueToday").textContent()).toBe(money(stats.financial.revenueToday, locale))
      expect(await page.getByTestId("stat-users.total").textContent()).toBe(new Intl.NumberFormat(locale).format(stats.users.total))
      const row = page.locator(`[data-testid=activity] tr[data-id="${activity.id}"]`)
      expect(await row.getByTestId("activity-type").textContent()).toBe(d.activityTypes.WITHDRAWAL_REQUEST)
      expect(await row.locator("td").first().textContent()).toBe(
        new Intl.DateTimeFormat(locale, { dateStyle: "short", timeStyle: "short", timeZone: "UTC" }).format(new Date(activity.createdAt))
      )
      expect(await row.locator("td.money").textContent()).toBe(money(1_500, locale))
      await chartIn(page, locale, dates)
    }
    await checkDashboard("pt-BR")
    // "26/11/2026, 17:45" and "R$ 15,00": pt-BR's own ways.
    const activityRow = page.locator(`[data-testid=activity] tr[data-id="${activity.id}"]`)
    expect(await activityRow.locator("td").first().textContent()).toMatch(/^\d{2}\/\d{2}\/\d{4},? \d{2}:\d{2}$/)
    expect(await activityRow.locator("td.money").textContent()).toBe("R$\u00a015,00")
    expect(await englishShown(page, onDashboard)).toEqual([])
    await photograph(page, "dashboard-pt")

    // Switched in place: English everywhere, the chart drawn again in English.
    await switchLanguage(page, "en")
    await checkDashboard("en")
    expect(await page.getByRole("link", { name: consoleText.in("en").sections.audit }).count()).toBe(1)
    await photograph(page, "dashboard-en")
    // Remembered: after a reload, and in a new page of the same browser.
    await page.reload()
    await page.getByTestId("stats").waitFor()
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe(dashboard.in("en").title)
    const second = await context.newPage()
    watch(second, errors)
    await second.goto(`${base}/admin/catalog`)
    await expect.poll(() => second.getByRole("heading", { level: 1 }).textContent()).toBe(catalog.in("en").title)
    expect(await second.evaluate<string>("document.documentElement.lang")).toBe("en")
    await switchLanguage(second, "pt-BR")
    await second.close()
    await page.reload()
    await page.getByTestId("stats").waitFor()
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe(dashboard.in("pt-BR").title)

    // The audit log: actions in words, dates in the language.
    const onAudit = [consoleText, audit, common]
    await page.getByRole("link", { name: consoleText.in("pt-BR").sections.audit }).click()
    const adjusted = page.locator("[data-testid=audit] [data-action=ADMIN_ADJUST_BALANCE]").first()
    await adjusted.waitFor()
    expect(await adjusted.textContent()).toBe(audit.in("pt-BR").actions.ADMIN_ADJUST_BALANCE)
    expect(await page.locator("[data-testid=audit] tbody tr td").first().textContent()).toMatch(/^\d{2}\/\d{2}\/\d{4},? \d{2}:\d{2}$/)
    expect(await englishShown(page, onAudit)).toEqual([])
    await photograph(page, "audit-pt")
    await switchLanguage(page, "en")
    expect(await adjusted.textContent()).toBe(audit.in("en").actions.ADMIN_ADJUST_BALANCE)
    await photograph(page, "audit-en")
    await switchLanguage(page, "pt-BR")

    // The catalog, the item editor and the case editor.
    const onCatalog = [consoleText, catalog, common]
    const c = catalog.in("pt-BR")
    await page.getByRole("link", { name: consoleText.in("pt-BR").sections.catalog }).click()
    const itemRow = page.locator(`[data-testid=items] tr[data-id="${item.id}"]`)
    await itemRow.waitFor()
    expect(await itemRow.getByTestId("value").textContent()).toBe("R$\u00a01.234,56")
    const caseRow = page.locator(`[data-testid=cases] tr[data-id="${kase.id}"]`)
    expect(await caseRow.getByTestId("rtp").textContent()).toBe(
      new Intl.NumberFormat("pt-BR", { style: "percent", minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(kase.rtp)
    )
    expect(await englishShown(page, onCatalog)).toEqual([])
    await photograph(page, "catalog-pt")
    await itemRow.getByRole("button", { name: c.edit }).click()
    const itemEditor = page.getByTestId("item-editor")
    expect(await itemEditor.getByLabel(c.valueReais, { exact: true }).inputValue()).toBe("1234,56")
    await itemEditor.getByLabel(c.valueReais, { exact: true }).fill("1500,00")
    await itemEditor.locator(`[data-testid=item-impact] li[data-case="caixa-rubi"]`).waitFor()
    expect(await englishShown(page, onCatalog)).toEqual([])
    await photograph(page, "item-editor-pt")
    await switchLanguage(page, "en")
    await photograph(page, "item-editor-en")
    await switchLanguage(page, "pt-BR")
    await itemEditor.getByRole("button", { name: c.cancel }).click()
    await caseRow.getByRole("button", { name: c.edit }).click()
    const caseEditor = page.getByTestId("case-editor")
    await caseEditor.getByTestId("rtp-preview").waitFor()
    await caseEditor.getByLabel(c.dropChanceOf("Rubi Lapidado"), { exact: true }).fill("0,005")
    await expect.poll(() => caseEditor.getByTestId("rtp-preview").textContent()).toContain(c.chancesAddUp("0,995"))
    expect(await englishShown(page, onCatalog)).toEqual([])
    await photograph(page, "case-editor-pt")
    await switchLanguage(page, "en")
    await expect.poll(() => caseEditor.getByTestId("rtp-preview").textContent())
      .toContain(catalog.in("en").chancesAddUp("0.995"))
    await photograph(page, "case-editor-en")
    await caseEditor.getByRole("button", { name: catalog.in("en").cancel }).click()
    await photograph(page, "catalog-en")

    await ok(admin, "PUT", `/api/admin/cases/${kase.id}`, { isActive: false })
    expect(errors).toEqual([])
    await context.close()
  }, 180_000)

  it("with 2FA on, an item's new value is saved only with a current code; without one the page shows the API's refusal and nothing changes", async () => {
    const admin = await devSessionAt(base, ADMIN)
    const guarded = await devSessionAt(base, CATALOG_ADMIN_WITH_2FA)
    const secret = await turnOnTwoFactor(guarded)
    const item = await ok(admin, "POST", "/api/admin/items", {
      name: "Esmeralda",
      rarity: "CLASSIFIED",
      valueCents: 1_000,
      imageUrl: "https://cdn.example.com/items/esmeralda.png",
      isUpgradable: true
    })
    const valueNow = () => everyValue(admin, item.id)

    const context = await newContext("pt-BR")
    const page = await context.newPage()
    const errors: Array<string> = []
    // The refusal without a code is provoked on purpose.
    watch(page, errors, [new RegExp(`^/api/admin/items/${item.id}$`)])
    await signIn(page, CATALOG_ADMIN_WITH_2FA)
    await page.goto(`${base}/admin/catalog`)
    const c = catalog.in("pt-BR")
    const row = page.locator(`[data-testid=items] tr[data-id="${item.id}"]`)
    await row.getByRole("button", { name: c.edit }).click()
    const editor = page.getByTestId("item-editor")
    await editor.getByLabel(c.valueReais, { exact: true }).fill("20,00")
    const save = async () => {
      await editor.getByRole("button", { name: c.saveItem }).click()
      await answerConfirmation(page, ["Esmeralda", money(2_000)], c.saveValue(money(2_000)))
    }

    // No code: the API's refusal, as it words it; the value unchanged.
    await save()
    await expect.poll(() => editor.getByRole("alert").textContent()).toBe("2FA code required")
    expect(await valueNow()).toBe(1_000)
    await photograph(page, "catalog-2fa-refused-pt")

    // A current code in the toolbar's field: saved.
    await page.getByLabel(consoleText.in("pt-BR").twoFactorCode).fill(authenticator.generate(secret))
    await save()
    await expect.poll(() => page.getByRole("status").textContent()).toContain(c.savedItem("Esmeralda", money(2_000)))
    expect(await valueNow()).toBe(2_000)
    await expect.poll(() => row.getByTestId("value").textContent()).toBe(money(2_000))
    expect(errors).toEqual([])
    await context.close()
  }, 60_000)
}

/** An item's value, through every page of the items. */
const everyValue = async (admin: string, id: string): Promise<number | undefined> => {
  for (let page = 1; ; page++) {
    const { items } = await ok(admin, "GET", `/api/admin/items?page=${page}&limit=100`)
    if (items.length === 0) return undefined
    const found = (items as Array<{ id: string; valueCents: number }>).find((i) => i.id === id)
    if (found !== undefined) return found.valueCents
  }
}
