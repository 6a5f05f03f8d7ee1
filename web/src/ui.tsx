import type { ComponentChildren } from "preact"
import type { Loaded } from "./useLoad"

/** An API error, as the API words it. */
export const ErrorNote = ({ text }: { text: string | undefined }) =>
  text ? <p class="note error" role="alert">{text}</p> : null

export const SuccessNote = ({ text }: { text: string | undefined }) =>
  text ? <p class="note ok" role="status">{text}</p> : null

/** Shows the value once loaded, a busy marker before, the error if it failed. */
export const Show = <A,>({ loaded, children }: { loaded: Loaded<A>; children: (value: A) => ComponentChildren }) =>
  loaded.state === "loading"
    ? <p aria-busy="true">Loading…</p>
    : loaded.state === "failed"
    ? <ErrorNote text={loaded.error} />
    : <>{children(loaded.value)}</>
