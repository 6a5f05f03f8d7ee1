/**
 * Two builds of the service side by side: this checkout and `--base` (a git revision), each one instance, on one
 * fresh database and Redis, the same step sent to each in turn. A change of a few per cent is lost in a host whose
 * speed moves by tens of per cent between two runs of `bench:hot-paths` (docs/decisions.md "Two builds side by
 * side"); here the host's moods fall on both builds alike, one step apart.
 *
 * Each of `--users` loops runs the step on one build, then on the other (the order swapped every step), with users
 * of its own on each build (a user's state kept by one instance is not disturbed by the other's writes), first
 * `--warm-up` steps per build unmeasured, then `--steps`. It prints each build's latency and its service's CPU per
 * step (its process's, from /proc), and this checkout's as a share of the base's.
 *
 * Steps: `me` (`GET /api/auth/me`), `opening` (`POST /api/cases/1/open`), `battle` (a 2-player battle's creation and
 * the join that fills it, both on the same build, as bench:hot-paths' battle step).
 * Both builds migrate the same database, so compare revisions with the same migrations.
 *
 *   npm run bench:ab -- --base <revision> [--step opening] [--users 1] [--steps 3000] [--warm-up 2000]
 *     [--postgres postgres://postgres@127.0.0.1:5432/postgres] [--redis redis://127.0.0.1:6379]
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { parseArgs } from "node:util"
import { type Answer, percentile, processCpuMs, startBench } from "./BenchService"

const { values } = parseArgs({
  options: {
    base: { type: "string" },
    step: { type: "string", default: "opening" },
    users: { type: "string", default: "1" },
    steps: { type: "string", default: "3000" },
    "warm-up": { type: "string", default: "2000" },
    postgres: { type: "string", default: "postgres://postgres@127.0.0.1:5432/postgres" },
    redis: { type: "string", default: "redis://127.0.0.1:6379" }
  }
})
if (values.base === undefined) throw new Error("--base <revision> is required")
const STEP = values.step
if (!["me", "opening", "battle"].includes(STEP)) throw new Error(`--step is me, opening or battle, not ${STEP}`)
const LOOPS = Number(values.users)
const STEPS = Number(values.steps)
const WARM_UP = Number(values["warm-up"])
const NAMES = [`base (${values.base})`, "this checkout"] as const

// The base's bundle, built in a worktree of its own beside this checkout (sharing its node_modules).
const worktree = mkdtempSync(join(tmpdir(), "gp-ab-"))
const base = execFileSync("git", ["rev-parse", "--short", values.base], { encoding: "utf8" }).trim()
execFileSync("git", ["worktree", "add", "--detach", worktree, base], { stdio: "ignore" })
// Removed however this ends: also on Ctrl-C, where the benchmark's own clean-up exits the process.
let removed = false
const removeWorktree = () => {
  if (removed) return
  removed = true
  execFileSync("git", ["worktree", "remove", "--force", worktree], { stdio: "ignore" })
  rmSync(worktree, { recursive: true, force: true })
}
process.on("exit", removeWorktree)
try {
  symlinkSync(resolve("node_modules"), join(worktree, "node_modules"))
  execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: worktree, stdio: "inherit" })

  const bench = await startBench({
    postgres: values.postgres,
    redis: values.redis,
    instances: 2,
    bundles: [join(worktree, "dist/main.mjs"), "dist/main.mjs"]
  })
  try {
    const perLoop = STEP === "battle" ? 2 : 1
    const { sessions } = await bench.signIn(2 * LOOPS * perLoop)
    /** The session of the loop's `n`th user on `side` (0: the base, 1: this checkout). */
    const session = (side: number, loop: number, n = 0) => sessions[(side * LOOPS + loop) * perLoop + n]!
    const ok = (answer: Answer, what: string) => {
      if (answer.status < 200 || answer.status > 299) throw new Error(`${what}: ${answer.status} ${JSON.stringify(answer.body)}`)
      return answer
    }
    const step = async (side: number, loop: number) => {
      if (STEP === "me") return void ok(await bench.sendTo(side, "GET", "/api/auth/me", session(side, loop)), "me")
      if (STEP === "opening") {
        return void ok(await bench.sendTo(side, "POST", "/api/cases/1/open", session(side, loop)), "opening")
      }
      const created = ok(
        await bench.sendTo(side, "POST", "/api/battles", session(side, loop), { caseIds: ["1"], mode: "NORMAL", maxPlayers: 2 }),
        "battle creation"
      )
      ok(await bench.sendTo(side, "POST", `/api/battles/${created.body.id}/join`, session(side, loop, 1)), "battle join")
    }

    /** `count` steps on each build in every loop; their latencies by build, and each build's service CPU per step. */
    const phase = async (count: number) => {
      const latencies: [Array<number>, Array<number>] = [[], []]
      const cpuBefore = bench.pids.map(processCpuMs)
      await Promise.all(Array.from({ length: LOOPS }, async (_, loop) => {
        for (let k = 0; k < count; k++) {
          for (const side of k % 2 === 0 ? [0, 1] : [1, 0]) {
            const started = performance.now()
            await step(side, loop)
            latencies[side]!.push(performance.now() - started)
          }
        }
      }))
      const cpuMs = bench.pids.map((pid, side) => (processCpuMs(pid) - cpuBefore[side]!) / (count * LOOPS))
      return { latencies, cpuMs }
    }

    console.log(`${STEP}: ${LOOPS} loop(s), ${WARM_UP} steps per build to warm up, then ${STEPS} measured`)
    await phase(WARM_UP)
    await bench.vacuum()
    const { cpuMs, latencies } = await phase(STEPS)
    const stats = latencies.map((all) => {
      const sorted = [...all].sort((a, b) => a - b)
      return { p50: percentile(sorted, 0.5), mean: sorted.reduce((a, b) => a + b, 0) / sorted.length }
    })
    for (const side of [0, 1]) {
      console.log(`${NAMES[side]!.padEnd(28)} p50 ${stats[side]!.p50.toFixed(2).padStart(7)} ms   mean ${
        stats[side]!.mean.toFixed(2).padStart(7)
      } ms   service CPU ${cpuMs[side]!.toFixed(3)} ms/step`)
    }
    const share = (after: number, before: number) => `${((100 * after) / before).toFixed(1)} %`
    console.log(`this checkout against the base: p50 ${share(stats[1]!.p50, stats[0]!.p50)}, mean ${
      share(stats[1]!.mean, stats[0]!.mean)
    }, service CPU ${share(cpuMs[1]!, cpuMs[0]!)}`)
  } finally {
    await bench.stop()
  }
} finally {
  removeWorktree()
}
