/**
 * lmdb-js's rejection of a failed commit (disk full, I/O error): an Error carrying `commitError`,
 * the promise of LMDB's own error. lmdb-js 3.5 rejects it for internal promises as well as the
 * caller's, so a process may also see it unhandled; the property, not the message, identifies it.
 * A module of its own, importing nothing, so that the CLI recognises one without loading LMDB.
 */
export function isCommitFailure(error: unknown): error is Error & { commitError: Promise<unknown> } {
  return error instanceof Error && 'commitError' in error && error.commitError instanceof Promise;
}
