/** How a connection's socket writes: each write's number of chunks (1 for a plain write, n for a writev of n). */
export const countWrites = (socket: unknown): Array<number> => {
  const stream = socket as { _write: Function; _writev: Function }
  const writes: Array<number> = []
  const [write, writev] = [stream._write, stream._writev]
  stream._write = function(this: unknown, ...args: Array<unknown>) {
    writes.push(1)
    return write.apply(this, args)
  }
  stream._writev = function(this: unknown, chunks: Array<unknown>, ...rest: Array<unknown>) {
    writes.push(chunks.length)
    return writev.call(this, chunks, ...rest)
  }
  return writes
}
