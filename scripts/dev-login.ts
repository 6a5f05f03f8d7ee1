/**
 * Prints a session id for a login name, signed in through the embedded development identity
 * provider of a running service (no OIDC_ISSUER), for trying the API with curl:
 *   npm run dev:login -- alice [--url http://localhost:3000]
 *   curl -H "Authorization: Bearer <printed id>" http://localhost:3000/api/auth/me
 */
import { parseArgs } from "node:util"
import { devSessionAt } from "../test/support/DevSignIn"

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { url: { type: "string", default: "http://localhost:3000" } }
})
const login = positionals[0]
if (login === undefined) {
  console.error("Usage: npm run dev:login -- <login name> [--url http://localhost:3000]")
  process.exit(2)
}
try {
  console.log(await devSessionAt(values.url, login))
} catch (error) {
  console.error(String(error))
  process.exit(1)
}
