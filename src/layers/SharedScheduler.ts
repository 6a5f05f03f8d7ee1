/**
 * One run queue for every fiber of the service, as Effect's default scheduler had before 3.20. Since 3.20 the default
 * keeps a runner per fiber (in a WeakMap by fiber, each draining in a microtask of its own) so that a fiber's
 * continuations run in the AsyncLocalStorage context it was started in. Nothing here uses AsyncLocalStorage (tracing
 * is Effect's own; the trace exporter registers no instrumentations), and per request the runners were two more
 * objects, two more microtasks and two WeakMap entries, each work for the next full collection (docs/decisions.md
 * "What outlives a request"). Tasks run in the order they were scheduled, in a microtask, and on a timer after 2048
 * microtasks in a row, as the default's runners do; fibers yield after the same number of operations.
 */
import { Layer, Scheduler } from "effect"

const MICROTASKS_BEFORE_TIMER = 2048

const runner = new Scheduler.SchedulerRunner((depth, drain) => {
  if (depth >= MICROTASKS_BEFORE_TIMER) setTimeout(() => drain(0), 0)
  else void Promise.resolve().then(() => drain(depth + 1))
})

const shared: Scheduler.Scheduler = {
  scheduleTask: (task, priority) => runner.scheduleTask(task, priority),
  shouldYield: (fiber) => Scheduler.defaultScheduler.shouldYield(fiber)
}

/** Runs every fiber started under it (the servers', the jobs', the requests') on the shared queue. */
export const SharedSchedulerLive: Layer.Layer<never> = Layer.setScheduler(shared)
