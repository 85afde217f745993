/** `sha256:` and 64 of `c`: a digest that names nothing, for pure statechart tests. */
export const D = (c: string) => `sha256:${c.repeat(64).slice(0, 64)}`;

/**
 * The Host events of one Assignment of Task `t1` from its commit until its run is observed
 * (compile the Context, dispatch, acknowledge, observe with `choice.json` as evidence): the
 * statechart is then `evaluating`.
 */
export function observedAssignment(
  generation: number,
  contextDigest: string,
  over: { harness?: string; purpose?: string; evidenceDigest?: string } = {},
): Array<Record<string, unknown>> {
  const clientRequestId = `t1/a1/g${generation}/run`;
  return [
    {
      type: 'assignment.commit',
      origin: 'external',
      generation,
      harness: over.harness ?? 'codex',
      purpose: over.purpose ?? 'choose',
      assignmentDigest: D(String(generation)),
    },
    { type: 'context.compile', generation, contextDigest, promptDigest: D('p') },
    { type: 'dispatch.intend', generation, clientRequestId },
    { type: 'dispatch.ack', clientRequestId, jobId: `job-${generation}` },
    {
      type: 'run.observe',
      generation,
      clientRequestId,
      contextDigest,
      receiptDigest: D('r'),
      jobStatus: 'succeeded',
      evidence: { 'choice.json': over.evidenceDigest ?? D('e') },
    },
  ];
}
