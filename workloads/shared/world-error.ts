import { CodedError, type CodedErrorOptions } from '../../base/index.js';

/** A world's code table: each code with whether the same call may succeed later unchanged. */
export type CodeTable<C extends string = string> = Readonly<Record<C, { retryable: boolean; meaning: string }>>;

/**
 * The coded error of a frozen world (the ledger, the provider, the web app): a subclass names its
 * code table as `static codes`, and `retryable` is the code's from that table unless given.
 */
export abstract class WorldError<C extends string> extends CodedError<C> {
  static readonly codes: CodeTable;

  constructor(code: C, message: string, options: CodedErrorOptions = {}) {
    const table = (new.target as unknown as { codes: CodeTable<C> }).codes;
    super(code, message, { retryable: table[code].retryable, ...options });
  }
}
