import { CodedError, type CodedErrorOptions } from '../../base/index.js';

/** A world's code table: each code with whether the same call may succeed later unchanged. */
export type CodeTable<C extends string = string> = Readonly<Record<C, { retryable: boolean; meaning: string }>>;

type ServerCode = 'start_failed' | 'usage' | 'unavailable' | 'answer_invalid';

/**
 * The four codes a world's server process and its control client share, under the world's prefix
 * (`provider_start_failed`, `webapp_usage`, …): `line` names what the server prints once it
 * listens, `calls` what its client calls.
 */
export function serverCodes<P extends string>(
  prefix: P,
  said: { line: string; calls: string },
): CodeTable<`${P}_${ServerCode}`> {
  const codes: CodeTable<ServerCode> = {
    start_failed: {
      retryable: false,
      meaning: `the server exited before its ${said.line}: the records file or the listen failed`,
    },
    usage: { retryable: false, meaning: "the server's command line does not parse (exit 2)" },
    unavailable: { retryable: true, meaning: `${said.calls} got no answer` },
    answer_invalid: { retryable: true, meaning: `${said.calls} got an answer that does not parse` },
  };
  return Object.fromEntries(
    Object.entries(codes).map(([code, entry]) => [`${prefix}_${code}`, entry]),
  ) as CodeTable<`${P}_${ServerCode}`>;
}

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
