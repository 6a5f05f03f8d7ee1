/**
 * Prints a session id for a login name, signed in through the embedded development identity
 * provider of a running service (no OIDC_ISSUER), for trying the API with curl:
 *   npm run dev:login -- alice [--url http://localhost:3000]
 *   curl -H "Authorization: Bearer <printed id>" http://localhost:3000/api/auth/me
 * The service is found where it says it is (PUBLIC_URL, else http://localhost:$PORT; scripts/ServiceUrl.ts); when
 * nothing answers there, one line names the URL and what to set.
 */
import { parseArgs } from "node:util"
import { devSessionAt } from "../test/support/DevSignIn"
import { serviceUrl, Unreachable, unreachableLine } from "./ServiceUrl"

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { url: { type: "string", default: serviceUrl() } }
})
const login = positionals[0]
if (login === undefined) {
  console.error("Usage: npm run dev:login -- <login name> [--url URL] (default: PUBLIC_URL, else http://localhost:$PORT)")
  process.exit(2)
}
const base = values.url.replace(/\/+$/, "")
try {
  console.log(await devSessionAt(base, login))
} catch (error) {
  console.error(error instanceof Unreachable ? unreachableLine(error, base) : String(error))
  process.exit(1)
}
