/**
 * A port already in use stops the start with one line naming the port and the variable that sets it (PORT, or
 * DEV_IDP_PORT for the development identity provider), and a non-zero exit: not a stack.
 */
import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort, serviceArgs } from "./support/ServiceProcess"

/** Another process's listener on `port`, on the address the service would take (any address, or loopback). */
const occupy = (port: number, host?: string) =>
  Effect.acquireRelease(
    Effect.promise(() => new Promise<Server>((resolve) => { const server = createServer().listen(port, host, () => resolve(server)) })),
    (server) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
  )

/** The service as `npm run dev` starts it, on `port` and `idpPort` in a fresh DATA_DIR (embedded database); its exit and output. */
const start = (port: number, idpPort: number) =>
  Effect.gen(function*() {
    const dataDir = mkdtempSync(join(tmpdir(), "gp-port-"))
    yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dataDir, { recursive: true, force: true })))
    const env: Record<string, string | undefined> = {
      ...process.env,
      PORT: String(port),
      DEV_IDP_PORT: String(idpPort),
      DATA_DIR: dataDir
    }
    for (const name of ["DATABASE_URL", "REDIS_URL", "PUBLIC_URL", "NODE_ENV", "LOG_LEVEL"]) delete env[name]
    const service = spawn(process.execPath, serviceArgs, { env, stdio: ["ignore", "pipe", "pipe"] })
    yield* Effect.addFinalizer(() => Effect.sync(() => service.kill("SIGKILL")))
    let stdout = ""
    let stderr = ""
    service.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    service.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    const code = yield* Effect.promise(() => new Promise<number | null>((resolve) => service.once("exit", resolve)))
    return { code, stdout, stderr }
  })

it.scoped("PORT in use: one line naming the port and PORT, exit 1", () =>
  Effect.gen(function*() {
    const [port, idpPort] = yield* Effect.promise(() => Promise.all([freePort(), freePort()]))
    yield* occupy(port)
    const { code, stdout, stderr } = yield* start(port, idpPort)
    expect({ code, stderr }, stdout).toEqual({ code: 1, stderr: `Cannot start: port ${port} is already in use: set PORT to a free port\n` })
    expect(stdout).not.toMatch(/EADDRINUSE|ServeError|\n\s+at /)
  }), { timeout: 60_000 })

it.scoped("DEV_IDP_PORT in use: one line naming the port and DEV_IDP_PORT, exit 1", () =>
  Effect.gen(function*() {
    const [port, idpPort] = yield* Effect.promise(() => Promise.all([freePort(), freePort()]))
    yield* occupy(idpPort, "127.0.0.1")
    const { code, stdout, stderr } = yield* start(port, idpPort)
    expect({ code, stderr }, stdout).toEqual({
      code: 1,
      stderr: `Cannot start: port ${idpPort} (the development identity provider's, default PORT + 1) is already in use: ` +
        "set DEV_IDP_PORT to a free port\n"
    })
    expect(stdout).not.toMatch(/EADDRINUSE|\n\s+at /)
  }), { timeout: 60_000 })
