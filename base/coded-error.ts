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

/**
 * The brand of a class: `Symbol.for` gives every copy of this module (two installs of the package,
 * a bundled and an unbundled one) the same symbol, so a brand set by one copy is read by another.
 */
function brandOf(className: string): symbol {
  return Symbol.for(`ordivon.${className}`);
}

/** What every coded error carries, whichever copy of this module made it. */
const CODED_ERROR_BRAND = brandOf('CodedError');

/**
 * The base of every layer's error class. Each class of an error's chain brands its prototype with
 * `Symbol.for('ordivon.<ClassName>')` on first use, and `instanceof` (inherited
 * `Symbol.hasInstance`) accepts an object of the class's own prototype chain or one that carries the
 * class's brand: an error thrown by another copy of the module is still recognised (Temporal's
 * `SymbolBasedInstanceOfError`). Class names are the identity across copies, so two error classes
 * of this product never share a name.
 */
export class CodedError<C extends string = string> extends Error implements ErrorData<C> {
  /** Own prototype chain first (the common case), else the brand another copy of the class set. */
  static override [Symbol.hasInstance](this: abstract new (...args: never[]) => unknown, instance: unknown): boolean {
    if (Function.prototype[Symbol.hasInstance].call(this, instance)) return true;
    return (
      typeof instance === 'object' &&
      instance !== null &&
      (instance as Record<symbol, unknown>)[brandOf(this.name)] === true
    );
  }

  readonly code: C;
  readonly path?: string;
  readonly retryable: boolean;

  constructor(code: C, message: string, options: CodedErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    if (options.path !== undefined) this.path = options.path;
    this.retryable = options.retryable ?? false;
    brandChain(this);
  }

  /** The error as plain data (what crosses a thread, a socket or a `--json` answer). */
  toData(): ErrorData<C> {
    const data: ErrorData<C> = { code: this.code, message: this.message, retryable: this.retryable };
    if (this.path !== undefined) data.path = this.path;
    return data;
  }
}

/** Brands each prototype of the error's chain, up to `Error`, with its class's brand (once per class). */
function brandChain(error: CodedError): void {
  for (
    let proto: unknown = Object.getPrototypeOf(error);
    proto !== null && proto !== Error.prototype && typeof proto === 'object';
    proto = Object.getPrototypeOf(proto)
  ) {
    if (!Object.hasOwn(proto, 'constructor')) continue;
    const brand = brandOf((proto as { constructor: { name: string } }).constructor.name);
    if (Object.hasOwn(proto, brand)) return;
    Object.defineProperty(proto, brand, { value: true });
  }
}

/**
 * True for any layer's coded error, also one whose class came from another copy of the module (it
 * carries the `Symbol.for('ordivon.CodedError')` brand); a plain `Error` with a `code` is not one.
 */
export function isCodedError(error: unknown): error is CodedError {
  return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[CODED_ERROR_BRAND] === true;
}
