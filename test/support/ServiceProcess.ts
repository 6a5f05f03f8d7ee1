/** What tests that start the service as its own process share: a free port to give it, and waiting for it to be ready. */
import { createServer } from "node:net"

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
