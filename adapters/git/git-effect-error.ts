import { CodedError, isCodedError, type CodedErrorOptions } from '../../base/index.js';

/**
 * The git adapter's codes, each with whether the same call may succeed later unchanged and
 * whether, raised by `perform`, it proves nothing was pushed (docs/errors.md lists them).
 */
export const GIT_EFFECT_CODES = {
  git_effect_no_answer: {
    retryable: false,
    notPerformed: false,
    meaning:
      'git push ran and no answer for the ref came back (a timeout, a dropped connection, git killed or failing ' +
      'without a status line): the branch may have been updated; look it up, never push again blindly',
  },
  git_effect_unreachable: {
    retryable: true,
    notPerformed: true,
    meaning: 'the remote could not be reached or read before the push: nothing was pushed',
  },
  git_effect_branch_moved: {
    retryable: false,
    notPerformed: true,
    meaning:
      'the branch is not at the version the intent expects (read before pushing, or the lease of the push refused): nothing was pushed',
  },
  git_effect_refused: {
    retryable: false,
    notPerformed: true,
    meaning: 'the remote rejected the push (a hook declined it, a protected branch): nothing was pushed',
  },
  git_effect_operation_unknown: {
    retryable: false,
    notPerformed: true,
    meaning: 'the intent names an operation other than `publish`: nothing was pushed',
  },
  git_effect_invalid_input: {
    retryable: false,
    notPerformed: true,
    meaning:
      'the input does not parse, the target is no valid branch name, the request id names no Task Attempt, or the workspace cannot be read: nothing was pushed',
  },
  git_effect_config_invalid: {
    retryable: false,
    notPerformed: true,
    meaning: 'the adapter config does not parse; `path` names the field',
  },
  git_effect_lookup_failed: {
    retryable: true,
    notPerformed: false,
    meaning:
      'a lookup or observe could not read the remote (ls-remote or fetch failed): nothing is known yet, ask again',
  },
} as const satisfies Record<string, { retryable: boolean; notPerformed: boolean; meaning: string }>;

export type GitEffectCode = keyof typeof GIT_EFFECT_CODES;

/** Why a git Effect call failed, as data; `stderr` is git's own message when git ran. */
export class GitEffectError extends CodedError<GitEffectCode> {
  readonly stderr?: string;

  constructor(code: GitEffectCode, message: string, options: CodedErrorOptions & { stderr?: string | undefined } = {}) {
    super(code, message, { retryable: GIT_EFFECT_CODES[code].retryable, ...options });
    if (options.stderr !== undefined) this.stderr = options.stderr;
  }
}

/** Whether an error `perform` threw proves nothing was pushed (read from its code, across module copies). */
export function gitNotPerformed(error: unknown): boolean {
  return (
    isCodedError(error) &&
    Object.hasOwn(GIT_EFFECT_CODES, error.code) &&
    GIT_EFFECT_CODES[error.code as GitEffectCode].notPerformed
  );
}
