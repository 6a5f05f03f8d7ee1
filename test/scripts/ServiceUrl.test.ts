/**
 * `npm run dev:login` and the benchmarks against a running service find it where the service says it is
 * (PUBLIC_URL, else http://localhost:$PORT), and when nothing answers there print one line naming the URL that
 * failed and what to set (scripts/ServiceUrl.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { serviceUrl } from "../../scripts/ServiceUrl"

/** Runs a script with `env` in place of the service's variables; its exit code and output. */
const run = (script: string, args: ReadonlyArray<string>, env: Record<string, string>) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const base: Record<string, string | undefined> = { ...process.env }
    for (const name of ["PORT", "PUBLIC_URL", "BENCH_URL"]) delete base[name]
    execFile(process.execPath, ["--import", "tsx", script, ...args], { env: { ...base, ...env } }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : Number(error.code), stdout, stderr }))
  })

/** A port nothing listens on. */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(port))
    })
  })

/** Something listening that is not the service: records the paths asked for, answers 404. */
const notTheService = () =>
  new Promise<{ port: number; paths: Array<string>; close: () => void }>((resolve) => {
    const paths: Array<string> = []
    const server = createServer((request, response) => {
      paths.push(request.url ?? "")
      response.writeHead(404).end()
    }).listen(0, () => resolve({ port: (server.address() as AddressInfo).port, paths, close: () => server.close() }))
  })

describe("serviceUrl", () => {
  it("PUBLIC_URL (without its trailing slash), else localhost on PORT, else port 3000", () => {
    expect(serviceUrl({ PUBLIC_URL: "https://games.example.com/", PORT: "8080" })).toBe("https://games.example.com")
    expect(serviceUrl({ PORT: "8080" })).toBe("http://localhost:8080")
    expect(serviceUrl({})).toBe("http://localhost:3000")
  })
})

describe("npm run dev:login", () => {
  it("goes to the service on PORT", async () => {
    const other = await notTheService()
    try {
      const { code, stderr } = await run("scripts/dev-login.ts", ["alice"], { PORT: String(other.port) })
      expect(other.paths).toEqual(["/api/auth/idp/login"])
      expect({ code, stderr }).toEqual({ code: 1, stderr: `Error: http://localhost:${other.port} did not start a sign-in (status 404)\n` })
    } finally {
      other.close()
    }
  })

  it("goes to PUBLIC_URL when it is set", async () => {
    const other = await notTheService()
    try {
      const { stderr } = await run("scripts/dev-login.ts", ["alice"], { PORT: "1", PUBLIC_URL: `http://127.0.0.1:${other.port}/` })
      expect(other.paths).toEqual(["/api/auth/idp/login"])
      expect(stderr).toContain(`http://127.0.0.1:${other.port} did not start a sign-in`)
    } finally {
      other.close()
    }
  })

  it("with nothing listening: one line naming the URL and PORT / PUBLIC_URL, exit 1", async () => {
    const port = await closedPort()
    const { code, stdout, stderr } = await run("scripts/dev-login.ts", ["alice"], { PORT: String(port) })
    expect({ code, stdout }).toEqual({ code: 1, stdout: "" })
    expect(stderr).toBe(
      `Cannot reach http://localhost:${port}/api/auth/idp/login (connection refused): is the service running there? ` +
        "Set PORT or PUBLIC_URL as the service has them (or pass --url)\n"
    )
  })
})

describe("the benchmarks against a running service", () => {
  it("npm run bench with nothing listening on PORT: one line naming the URL, exit 1", async () => {
    const port = await closedPort()
    const { code, stderr } = await run("bench/load.ts", ["--seconds", "1"], { PORT: String(port) })
    expect(code).toBe(1)
    expect(stderr).toBe(
      `Cannot reach http://localhost:${port}/api/health (connection refused): is the service running there? ` +
        "Set PORT or PUBLIC_URL as the service has them (or pass --url)\n"
    )
  })
})
