/**
 * What tests that start the service or the operator commands as processes share: a free port to give the service,
 * waiting for it to be ready, and running a command to its end. Both run as `npm start` and `npm run cli` run
 * them, from the bundles the test run built once (test/support/globalSetup.ts).
 */
import { spawn } from "node:child_process"
import { createServer } from "node:net"
import { cliArgs, serviceArgs } from "../../bench/serviceCommand"

export { serviceArgs }

export interface CliRun {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs node with `nodeArgs` and `env` to its end. */
const runToEnd = (env: NodeJS.ProcessEnv, nodeArgs: ReadonlyArray<string>) =>
  new Promise<CliRun>((resolve) => {
    const child = spawn(process.execPath, nodeArgs, { env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    child.once("exit", (code) => resolve({ code, stdout, stderr }))
  })

/** Runs an operator command (`npm run cli -- <args>`) with `env` to its end. */
export const runCli = (env: NodeJS.ProcessEnv, ...args: ReadonlyArray<string>) => runToEnd(env, [...cliArgs, ...args])

/** Runs the service (`npm start`) with `env` to its end: for a start that is refused. */
export const runServiceToEnd = (env: NodeJS.ProcessEnv) => runToEnd(env, serviceArgs)

/** A TCP port free on the loopback address right now. */
export const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

/** Resolves once `GET <base>/api/ready` answers 200; fails after 90 s. */
export const untilReady = async (base: string) => {
  for (let i = 0; i < 900; i++) {
    try {
      if ((await fetch(`${base}/api/ready`)).status === 200) return
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error("the service did not become ready")
}
