import "@picocss/pico/css/pico.min.css"
import "./styles.css"
import { render } from "preact"
import { lazy, Suspense } from "preact/compat"
import { Home } from "./Home"

// The console (and its chart library) is loaded only under /admin.
const Console = lazy(() => import("./admin/Console").then((m) => ({ default: m.Console })))

const App = () =>
  location.pathname === "/admin" || location.pathname.startsWith("/admin/")
    ? (
      <Suspense fallback={<main class="container" aria-busy="true" />}>
        <Console />
      </Suspense>
    )
    : <Home />

render(<App />, document.getElementById("app")!)
