import type { HermesScriptIn } from '../scripted/hermes-script.js';
import type { Workload } from '../../cli/workload.js';

/**
 * What a scripted provider does in one run: diagnose; repair; repair but write no completion.json
 * (fault F2); or leave the source alone, write a completion.json that fails its schema and claim
 * success in its final text (the artifact-first case).
 */
export type Behaviour = 'diagnose' | 'repair' | 'repair-without-completion' | 'claim-success';

/**
 * Scripted provider behaviours for the hamilton-v1 workload. They are deterministic stand-ins,
 * labelled scripted wherever they appear; the same drivers run real providers by configuration.
 *
 * - diagnose: reads the code, "runs" the tests, writes diagnosis.json, leaves the source alone;
 * - repair: edits the source (each harness its own correct implementation) and writes
 *   completion.json;
 * - repair without completion (fault F2): the same edit, exits 0, but writes no completion.json;
 * - claim success: no edit, an invalid completion.json, and a final text saying all is done.
 */
export const DIAGNOSIS = {
  location: { file: 'src/allocate.js', line: 20, symbol: 'allocate' },
  cause:
    'Leftover seats are handed out in ascending order of remainder: the comparator sorts a.remainder - b.remainder, so the smallest remainders win instead of the largest.',
  evidence: [
    'test "textbook case" expects { A: 5, B: 2, C: 2, D: 1 } and gets the leftovers on the smallest remainders',
    'SPEC.md step 3: the seats left over go to the parties with the largest fractional remainders',
  ],
};

export function completion(implementation: string) {
  return {
    summary: `Leftover seats now go to the largest remainders (${implementation}); ties by votes, then name, as SPEC.md requires.`,
    filesChanged: ['src/allocate.js'],
    testsRun: ['node --test test/'],
  };
}

/**
 * What a provider that only *says* it succeeded leaves behind (the artifact-first case): a
 * completion.json that fails the completion schema (no filesChanged, no testsRun), and an
 * untouched source.
 */
export const CLAIMED_COMPLETION = { status: 'success', summary: 'Fixed the allocation defect; all tests pass.' };

/** The Hermes-like agent's scripts: many thoughts, a tool call it never completes, no final text. */
export function hermesLikeScript(workload: Workload, behaviour: Behaviour): HermesScriptIn {
  const thinking = { do: 'thought', text: 'Considering the allocation order… ', repeat: 12 } as const;
  if (behaviour === 'diagnose') {
    return {
      steps: [
        thinking,
        { do: 'read', path: 'src/allocate.js', into: 'source' },
        { do: 'read', path: 'SPEC.md' },
        { do: 'tool_call', id: 'run-tests', title: 'node --test test/', kind: 'execute', status: 'in_progress' },
        { do: 'write', path: 'diagnosis.json', json: DIAGNOSIS },
        { do: 'usage', used: 1800, size: 128000 },
      ],
    };
  }
  if (behaviour === 'claim-success') {
    return {
      steps: [
        thinking,
        { do: 'write', path: 'completion.json', json: CLAIMED_COMPLETION },
        { do: 'usage', used: 900, size: 128000 },
      ],
    };
  }
  return {
    steps: [
      thinking,
      {
        do: 'tool_call',
        id: 'edit-source',
        title: 'rewrite src/allocate.js with exact integer remainders',
        kind: 'edit',
        status: 'in_progress',
      },
      { do: 'write', path: 'src/allocate.js', content: workload.file('scripted/hermes-allocate.js') },
      ...(behaviour === 'repair'
        ? [
            {
              do: 'write' as const,
              path: 'completion.json',
              json: completion('exact integer remainders, sorted descending'),
            },
          ]
        : []),
      { do: 'usage', used: 2400, size: 128000 },
    ],
  };
}
