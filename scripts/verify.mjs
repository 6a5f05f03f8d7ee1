/**
 * The fairness verifier (docs/fairness.md#a-verifier-you-can-run): checks a provably fair roll — a case
 * opening (FLIP included), an upgrade, a battle round or a raffle draw — from what the service revealed,
 * with nothing but Node's own `node:crypto`. It imports nothing from this project and is plain JavaScript, so
 * it can be copied out and run alone with any Node 18 or later (`node verify.mjs ...`).
 *
 *   npm run verify -- answer.json                       a verify answer saved as a file
 *   npm run verify -- '{"openingId": "17", ...}'        the answer itself
 *   curl -s ... | npm run -s verify -- -                the answer on standard input
 *   npm run verify -- 17 --session <id> [--url ...]     fetched from the service (--type: opening by default)
 *   ... --hash <the hash shown before the roll> [--client-seed <yours> --nonce <n>]
 *
 * Prints each check and a verdict; exit 0 when every check holds, 1 when one does not, 2 when the answer
 * could not be read or fetched.
 */
import { createHash, createHmac } from "node:crypto"
import { existsSync, readFileSync } from "node:fs"
import { parseArgs } from "node:util"

const USAGE = `Usage: npm run verify -- <answer.json | JSON | - | id> [options]
  <answer>              a verify answer: a file, the JSON itself, - for standard input, or an id to fetch
  --hash <hex>          the server seed hash shown before the roll (nextServerSeedHash, or the battle's or raffle's serverSeedHash)
  --client-seed <seed>  the client seed you had set before the roll
  --nonce <n>           the nonce the roll should use (nonce + 1 of GET /api/provably-fair/client-seed before it)
  --type <type>         what the id is: opening (default), upgrade, battle-roll or raffle
  --url <url>           the service (default: PUBLIC_URL, else http://localhost:$PORT, else http://localhost:3000)
  --session <id>        your session id (default: SESSION), for openings, upgrades and battle rounds`

/** Prints the message and exits 2: the answer could not be read or fetched. */
const fail = (message) => {
  console.error(message)
  process.exit(2)
}

const { positionals, values } = (() => {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        hash: { type: "string" },
        "client-seed": { type: "string" },
        nonce: { type: "string" },
        type: { type: "string", default: "opening" },
        url: { type: "string" },
        session: { type: "string" },
        help: { type: "boolean", short: "h" }
      }
    })
  } catch (error) {
    return fail(`${error.message}\n${USAGE}`)
  }
})()
if (values.help === true) {
  console.log(USAGE)
  process.exit(0)
}
const input = positionals[0]
if (input === undefined || positionals.length > 1) fail(USAGE)
if ((values["client-seed"] === undefined) !== (values.nonce === undefined)) fail("--client-seed and --nonce go together")

const VERIFY_PATHS = {
  opening: (id) => `/api/cases/openings/${id}/verify`,
  upgrade: (id) => `/api/upgrades/${id}/verify`,
  "battle-roll": (id) => `/api/provably-fair/verify/${id}?type=battle-roll`,
  raffle: (id) => `/api/raffles/${id}`
}

const fetchAnswer = async (id) => {
  const path = VERIFY_PATHS[values.type] ?? fail(`--type must be one of ${Object.keys(VERIFY_PATHS).join(", ")}`)
  const base = (values.url ?? process.env.PUBLIC_URL ?? `http://localhost:${process.env.PORT ?? 3000}`).replace(/\/+$/, "")
  const session = values.session ?? process.env.SESSION
  const url = `${base}${path(encodeURIComponent(id))}`
  const response = await fetch(url, { headers: session ? { authorization: `Bearer ${session}` } : {} })
    .catch((error) => fail(`Could not reach ${url}: ${error.cause?.message ?? error.message}`))
  const text = await response.text()
  if (!response.ok) {
    fail(`${url} answered ${response.status}: ${text.slice(0, 300)}${response.status === 401 ? " (--session or SESSION)" : ""}`)
  }
  return text
}

const readAnswer = async () => {
  if (input === "-") return readFileSync(0, "utf8")
  if (input.trimStart().startsWith("{")) return input
  if (existsSync(input)) return readFileSync(input, "utf8")
  if (/^\d+$/.test(input)) return fetchAnswer(input)
  return fail(`${input} is not a file, a JSON answer or an id\n${USAGE}`)
}

const text = await readAnswer()
const r = (() => {
  try {
    const parsed = JSON.parse(text)
    return typeof parsed === "object" && parsed !== null ? parsed : fail("The answer is not a JSON object")
  } catch {
    return fail(`The answer is not JSON: ${text.slice(0, 200)}`)
  }
})()

const sha256 = (text) => createHash("sha256").update(text).digest("hex")
const h = (seed, message) => BigInt("0x" + createHmac("sha256", seed).update(message).digest("hex"))
const caseRoll = (message) => Number(h(r.serverSeed, message) % 10000000n) + 1
// A chance in exact units of 0.0000001, from its decimal digits (chances have at most 7 decimals).
const decimal = (chance) => /^(\d+)(?:\.(\d{1,7}))?$/.exec(String(chance))
const units = (m) => Number(m[1]) * 10000000 + Number((m[2] ?? "").padEnd(7, "0"))
const checks = []
const check = (what, ok) => checks.push([what, ok === true])
const has = (...names) => names.every((name) => r[name] !== undefined && r[name] !== null)

const seedIsText = typeof r.serverSeed === "string"
check("sha256(serverSeed) = the answer's serverSeedHash", seedIsText && sha256(r.serverSeed) === r.serverSeedHash)
if (values.hash !== undefined) {
  check("sha256(serverSeed) = the hash shown before the roll (--hash)", seedIsText && sha256(r.serverSeed) === values.hash.toLowerCase())
}
let what = "an answer this script does not know"
if ("winningTicket" in r) { // a raffle
  what = `raffle ${r.id}, winning ticket ${r.winningTicket} of ${r.ticketsSold}`
  const blocks = Array.isArray(r.ticketSeeds) ? r.ticketSeeds : []
  check("drawn, with every ticket's client seed", r.status === "DRAWN" && blocks.length > 0 && r.ticketsSold > 0)
  check("ticket blocks run 1..ticketsSold in order", blocks.every((b, i) =>
    b.firstTicket === (i === 0 ? 1 : blocks[i - 1].lastTicket + 1) && b.lastTicket >= b.firstTicket) &&
    blocks.at(-1)?.lastTicket === r.ticketsSold)
  const digest = sha256(blocks.flatMap((b) => Array(b.lastTicket - b.firstTicket + 1).fill(b.clientSeed)).join(":"))
  check("the ticket seeds digest", digest === r.ticketSeedsDigest)
  check("the winning ticket", r.ticketsSold > 0 &&
    Number(h(r.serverSeed, `${r.id}:${r.ticketsSold}:${digest}`) % BigInt(r.ticketsSold)) + 1 === r.winningTicket)
} else {
  check("the roll's inputs are all there", seedIsText && has("clientSeed", "nonce", "roll"))
  if (values["client-seed"] !== undefined) {
    check("your client seed and nonce (--client-seed, --nonce)", r.clientSeed === values["client-seed"] && r.nonce === Number(values.nonce))
  }
  const message = `${r.clientSeed}:${r.nonce}`
  if ("upgradeId" in r) { // an upgrade
    what = `upgrade ${r.upgradeId}, roll ${r.roll} (${r.success ? "success" : "failure"})`
    const roll = Number(h(r.serverSeed, message) % 100000n)
    const m = decimal(r.probability)
    check(`the roll: HMAC-SHA256(serverSeed, "${message}") mod 100000 = ${roll}`, roll === r.roll)
    check("the threshold, floor(probability x 100000)",
      r.threshold === (m ? Math.floor(units(m) / 100) : Math.floor(r.probability * 100000)))
    check("the outcome: success exactly when roll < threshold", r.success === (roll < r.threshold))
  } else if ("openingId" in r) { // a case opening
    what = `opening ${r.openingId}, roll ${r.roll}${r.isFlip ? `, FLIP roll ${r.flipRoll}` : ""}`
    const roll = seedIsText ? caseRoll(message) : NaN
    check(`the roll: HMAC-SHA256(serverSeed, "${message}") mod 10000000 + 1 = ${roll}, in the block of the item it selected`,
      has("rangeStart", "rangeEnd") && roll === r.roll && r.rangeStart <= r.roll && r.roll <= r.rangeEnd)
    const m = decimal(r.flipChance)
    const t = seedIsText ? Number(h(r.serverSeed, `${message}:flip`) % 10000000n) : NaN
    check(`FLIP or not: ${t} < flipChance x 10000000 is ${r.isFlip}`, has("flipChance", "isFlip") &&
      (t < (m ? units(m) : Math.floor(r.flipChance * 10000000))) === r.isFlip)
    if (r.isFlip) {
      check("FLIP rolls the same seed and client seed with the next nonce",
        r.flipServerSeed === r.serverSeed && r.flipClientSeed === r.clientSeed && r.flipNonce === r.nonce + 1)
      const flipRoll = caseRoll(`${r.clientSeed}:${r.nonce + 1}`)
      check(`the FLIP roll ${flipRoll}, in its item's block`,
        flipRoll === r.flipRoll && r.flipRangeStart <= flipRoll && flipRoll <= r.flipRangeEnd)
    }
  } else if ("rollId" in r) { // a battle round
    what = `battle roll ${r.rollId}, roll ${r.roll}`
    check("the roll", seedIsText && caseRoll(message) === r.roll)
  } else {
    check("an answer this script knows (an opening, upgrade, battle round or raffle)", false)
  }
}
for (const [description, ok] of checks) console.log(`${ok ? "ok  " : "FAIL"} ${description}`)
const valid = checks.every(([, ok]) => ok)
if (values.hash === undefined) {
  console.log("note: without --hash this shows the seed matches the answer's own hash; the commitment is the hash you wrote down before the roll")
}
console.log(valid
  ? `valid: ${what} follows from the revealed server seed`
  : `invalid: ${checks.filter(([, ok]) => !ok).length} of ${checks.length} checks failed for ${what}`)
process.exitCode = valid ? 0 : 1
