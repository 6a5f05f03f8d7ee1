import "@picocss/pico/css/pico.min.css"
import "./styles.css"
import { render } from "preact"
import { lazy, Suspense } from "preact/compat"
import { Home } from "./Home"
import { useLocale } from "./useLocale"

// The console (and its chart library) is loaded only under /admin.
const Console = lazy(() => import("./admin/Console").then((m) => ({ default: m.Console })))

// Every page reads the language while rendering; switching it re-renders from here.
const App = () => (useLocale(), route())

const route = () =>
  location.pathname === "/admin" || location.pathname.startsWith("/admin/")
    ? (
      <Suspense fallback={<main class="container" aria-busy="true" />}>
        <Console />
      </Suspense>
    )
    : <Home />

render(<App />, document.getElementById("app")!)
