import { rmSync } from 'node:fs';
import { openHost } from '../../actors/host.js';
import type { HarnessRunReceipt } from '../../drivers/receipt.js';
import { resolveStateRoot } from '../../store/index.js';
import { scriptedHarnesses, type AcpAgent, type Behaviour } from '../../workloads/scripted-harnesses.js';
import { loadWorkload } from '../../workloads/workload.js';
import { CliError, EXIT, emit, parse, type Io } from '../cli-io.js';

const FAULTS = ['F1', 'F2', 'F3'] as const;
type Fault = (typeof FAULTS)[number];

/**
 * `ordivon demo`: the frozen hamilton-v1 repair workload, end to end on the embedded store.
 * One Task, one Attempt: generation 1 diagnoses with harness A, the Task waits, generation 2
 * repairs with harness B (a new provider session with a fresh Context carrying the diagnosis),
 * the Host verifies independently and commits the outcome. Faults: F1 stale assignment, F2
 * success without artifact, F3 response loss.
 */
export async function demo(argv: string[], io: Io): Promise<number> {
  const { values } = parse(argv, {
    state: { type: 'string' },
    json: { type: 'boolean' },
    order: { type: 'string', default: 'codex-first' },
    'acp-agent': { type: 'string', default: 'opencode' },
    fault: { type: 'string', multiple: true, default: [] },
    fresh: { type: 'boolean' },
  });
  const order = values.order;
  if (order !== 'codex-first' && order !== 'hermes-first') throw new CliError('usage', '--order must be codex-first or hermes-first', EXIT.usage);
  const acpAgent = values['acp-agent'] as AcpAgent;
  if (acpAgent !== 'opencode' && acpAgent !== 'hermes-like') throw new CliError('usage', '--acp-agent must be opencode or hermes-like', EXIT.usage);
  const faults = new Set<Fault>();
  for (const f of values.fault ?? []) {
    if (!FAULTS.includes(f as Fault)) throw new CliError('usage', `--fault must be one of ${FAULTS.join(', ')}`, EXIT.usage);
    faults.add(f as Fault);
  }
  const state = resolveStateRoot(values.state);
  if (values.fresh) rmSync(state, { recursive: true, force: true });

  const workload = loadWorkload('hamilton-v1');
  const [first, second] = order === 'codex-first' ? (['codex', 'hermes'] as const) : (['hermes', 'codex'] as const);
  const behaviourOf = ({ purpose, generation }: { purpose: string; generation: number }): Behaviour =>
    purpose === 'diagnose' ? 'diagnose' : faults.has('F2') && generation === 2 ? 'repair-without-completion' : 'repair';
  const scripted = scriptedHarnesses({ workload, acpAgent, behaviourOf });
  const say = (text: string) => {
    if (!io.json) io.err(text);
  };
  const host = await openHost({
    state,
    harnesses: scripted.harnesses,
    onStep: (taskId, text) => say(`  [${taskId.slice(0, 13)}] ${text}`),
    ...(faults.has('F3') ? { dropDispatchResponse: (t) => t.context.generation === 2 && t.context.assignment?.purpose === 'repair' } : {}),
  });
  const sup = host.supervisor;
  try {
    say(`ordivon demo: ${workload.name}, ${first} diagnoses, ${second} repairs (ACP agent: ${acpAgent}, scripted models on loopback)${faults.size ? `, faults ${[...faults].join(' ')}` : ''}`);
    say(`state root: ${state}`);
    const { taskId } = await sup.createTask(workload.spec);
    say(`task ${taskId} created`);

    await sup.send(taskId, { type: 'assignment.commit', harness: first, purpose: 'diagnose' });
    say(`generation 1: ${first} diagnoses`);
    await sup.waitFor(taskId, ['waiting']);

    await sup.send(taskId, { type: 'assignment.commit', harness: second, purpose: 'repair' });
    say(`generation 2: ${second} repairs (replacement; generation 1 is fenced)`);
    if (faults.has('F1')) {
      const stale = await sup.send(taskId, { type: 'completion.propose', generation: 1, summary: `${first} claims the task is complete`, proposer: first });
      say(`F1: ${first} (generation 1) proposes completion → ${stale.written ? 'retained' : 'refused'} ${stale.code}`);
    }
    let final = await sup.waitFor(taskId, ['completed', 'waiting']);
    if (final === 'waiting' && faults.has('F2')) {
      const r = sup.getTask(taskId)!.context.rejections.at(-1);
      say(`F2: the repair exited 0 without completion.json → ${r?.reason} (${r?.detail}); nothing verified; the Task waits`);
      await sup.send(taskId, { type: 'assignment.commit', harness: second, purpose: 'repair' });
      say(`generation 3: ${second} repairs again`);
      final = await sup.waitFor(taskId, ['completed', 'waiting']);
    }
    const report = summarize(host, taskId);
    emit(io, report, () => human(report));
    return final === 'completed' ? EXIT.ok : EXIT.failed;
  } finally {
    await host.stop();
    await scripted.close();
  }
}

function summarize(host: Awaited<ReturnType<typeof openHost>>, taskId: string) {
  const sup = host.supervisor;
  const task = sup.getTask(taskId)!;
  const receipts = sup
    .events(taskId)
    .filter((e) => e.type === 'run.observe')
    .map((e) => {
      const r = sup.getObject<HarnessRunReceipt>(String(e.data.receiptDigest)).body;
      return {
        generation: e.data.generation,
        disposition: e.disposition,
        driver: r.driver,
        provider: `${r.provider.name}${r.provider.version ? ` ${r.provider.version}` : ''}`,
        model: r.model,
        session: r.threadId ?? r.sessionId,
        turn: r.turnId,
        counts: r.counts,
        usage: r.usage,
        stopReason: r.stopReason,
        finalText: r.finalText ?? null,
        evidence: Object.keys(e.data.evidence as object),
      };
    });
  return {
    taskId,
    state: task.state,
    revision: task.revision,
    generation: task.context.generation,
    outcome: task.context.outcome,
    verification: task.context.verification,
    evidence: task.context.evidence,
    rejections: task.context.rejections,
    receipts,
  };
}

function human(r: ReturnType<typeof summarize>): string {
  const lines = [
    '',
    `${r.taskId}: ${r.state} at revision ${r.revision}, generation ${r.generation}`,
    r.outcome ? `outcome ${r.outcome.digest} (committed at revision ${r.outcome.revision})` : 'no outcome',
    r.verification ? `verification: ${r.verification.passed ? 'passed' : 'failed'}, Host-computed source digest ${r.verification.sourceDigest}` : 'verification: not run',
    'evidence:',
    ...Object.entries(r.evidence).map(([n, e]) => `  ${n.padEnd(16)} ${e.digest} (generation ${e.generation})`),
    'receipts:',
    ...r.receipts.map(
      (x) =>
        `  g${x.generation} ${x.driver.padEnd(5)} ${x.provider} model=${x.model ?? '-'} session=${x.session ?? '-'}${x.turn ? ` turn=${x.turn}` : ''}\n` +
        `      stop=${x.stopReason} messages=${x.counts.messages} thoughts=${x.counts.thoughts} tools=${x.counts.toolItemsCompleted}/${x.counts.toolItemsStarted} ` +
        `usage=${JSON.stringify(x.usage)} final text: ${x.finalText === null ? '(none)' : JSON.stringify(x.finalText.slice(0, 80))} evidence: ${x.evidence.join(', ') || 'none'}`,
    ),
    ...(r.rejections.length ? ['rejections:', ...r.rejections.map((x) => `  r${x.revision} ${x.event} g${x.generation}: ${x.reason}${x.detail ? ` (${x.detail})` : ''}`)] : []),
    '',
    `inspect: ordivon show ${r.taskId} --events`,
  ];
  return lines.join('\n');
}
