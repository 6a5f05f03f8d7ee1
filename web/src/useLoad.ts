import { useCallback, useEffect, useState } from "preact/hooks"
import { errorText } from "./api"

export type Loaded<A> =
  | { readonly state: "loading" }
  | { readonly state: "failed"; readonly error: string }
  | { readonly state: "ready"; readonly value: A }

/** Runs `load` now and whenever `deps` change; `reload` runs it again, keeping the last value on screen meanwhile. */
export const useLoad = <A,>(load: () => Promise<A>, deps: ReadonlyArray<unknown>) => {
  const [result, setResult] = useState<Loaded<A>>({ state: "loading" })
  const run = useCallback(() => {
    let current = true
    load().then(
      (value) => current && setResult({ state: "ready", value }),
      (error) => current && setResult({ state: "failed", error: errorText(error) })
    )
    return () => {
      current = false
    }
  }, deps)
  useEffect(run, [run])
  return [result, run] as const
}
