/**
 * The one error shape every layer shares. A layer's error class (StoreError, RuntimeError,
 * DriverError, HostError, CliError, …) extends `CodedError` with its own code union, so the code,
 * the offending field path and retryability are fields, never parts of a message, and a layer
 * converts another's error by reading those fields, without casts.
 */
export interface ErrorData<C extends string = string> {
  /** Stable string code: the contract, listed in the error table (docs/errors.md). */
  code: C;
  /** For people; never parsed. */
  message: string;
  /** The offending field of a parsed input (`data.evidence.report.json`), when there is one. */
  path?: string;
  /** Whether the same call may succeed later unchanged (Restate's terminal vs retryable). */
  retryable: boolean;
}

export interface CodedErrorOptions {
  path?: string | undefined;
  retryable?: boolean | undefined;
  cause?: unknown;
}

export class CodedError<C extends string = string> extends Error implements ErrorData<C> {
  readonly code: C;
  readonly path?: string;
  readonly retryable: boolean;

  constructor(code: C, message: string, options: CodedErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    if (options.path !== undefined) this.path = options.path;
    this.retryable = options.retryable ?? false;
  }

  /** The error as plain data (what crosses a thread, a socket or a `--json` answer). */
  toData(): ErrorData<C> {
    const data: ErrorData<C> = { code: this.code, message: this.message, retryable: this.retryable };
    if (this.path !== undefined) data.path = this.path;
    return data;
  }
}

/** True for any layer's coded error (also one whose class came from another copy of the module). */
export function isCodedError(error: unknown): error is CodedError {
  return error instanceof CodedError;
}
