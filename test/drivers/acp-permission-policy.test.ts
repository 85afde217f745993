import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runAcp } from '../../drivers/acp/index.js';
import { DriverRunInput, permissionKey, type HarnessRunReceipt } from '../../drivers/index.js';
import { hermesLikeLaunch, type HermesScriptIn } from '../../workloads/scripted/hermes-script.js';

// A real child process speaking ACP over stdio (the scripted Hermes-like agent, on the official
// SDK) asks for permissions; the driver answers each through the run's policy, on the wire.

let root: string;
let n = 0;
before(() => {
  root = mkdtempSync(join(tmpdir(), 'ordivon-acp-policy-'));
});
after(() => rmSync(root, { recursive: true, force: true }));

/** One run in `case-<dir>` (a run of the same dir uses the same workspace). */
async function run(script: HermesScriptIn, policy: unknown, dir = join(root, `case-${++n}`)) {
  const work = join(dir, 'work');
  mkdirSync(work, { recursive: true });
  const tracePath = join(dir, `trace-${++n}.jsonl`);
  const input = DriverRunInput.parse({
    driver: 'acp',
    runId: `run-${n}`,
    ...hermesLikeLaunch({ trace: tracePath, ...script }),
    cwd: work,
    prompt: 'Write the notes.',
    contextDigest: 'sha256:' + '0'.repeat(64),
    timeoutMs: 20_000,
    policy,
  });
  const result = await runAcp(input, new AbortController().signal);
  assert.ok(result.receipt, JSON.stringify(result));
  const outcomes = readFileSync(tracePath, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { event: string; id?: string; outcome?: string })
    .filter((e) => e.event === 'permission')
    .map((e) => [e.id, e.outcome]);
  return { work, receipt: result.receipt, outcomes };
}

const answers = (receipt: HarnessRunReceipt) => (receipt.permissions ?? []).map((p) => [p.answer, p.reason]);

const ASKS: HermesScriptIn['steps'] = [
  { do: 'permission', id: 'tc-1', title: 'write notes', kind: 'edit', locations: ['notes.txt'] },
  { do: 'write', path: 'notes.txt', content: 'private and reversible\n' },
  { do: 'permission', id: 'tc-2', title: 'deploy', kind: 'execute', command: 'make deploy' },
  { do: 'permission', id: 'tc-3', title: 'edit the sibling', kind: 'edit', locations: ['../sibling/config.json'] },
  // The same request again, under another tool call id: one escalation, one key.
  {
    do: 'permission',
    id: 'tc-4',
    title: 'edit the sibling again',
    kind: 'edit',
    locations: ['../sibling/config.json'],
  },
];

describe('the ACP driver routes session/request_permission through the evidence policy', () => {
  it('allows a private edit, refuses a forbidden command and declines (escalates) an edit outside the workspace', async () => {
    const { work, receipt, outcomes } = await run({ steps: ASKS }, { approvals: 'route', forbid: ['execute'] });
    assert.deepEqual(outcomes, [
      ['tc-1', 'allow'],
      ['tc-2', 'deny'],
      ['tc-3', 'deny'],
      ['tc-4', 'deny'],
    ]);
    assert.equal(readFileSync(join(work, 'notes.txt'), 'utf8'), 'private and reversible\n');
    assert.deepEqual(answers(receipt), [
      ['allow', 'private_reversible'],
      ['refuse', 'authority_forbids'],
      ['escalate', 'not_private'],
    ]);
    const escalated = receipt.permissions![2]!.evidence;
    const sibling = join(work, '../sibling/config.json');
    assert.equal(escalated.key, permissionKey({ kind: 'edit', title: '', command: null, paths: [sibling] }, work));
    assert.deepEqual([escalated.ownership, escalated.insideWorkspace], ['shared', false]);
  });

  it('a grant of the escalated key allows exactly that request in a later run', async () => {
    const dir = join(root, 'granted');
    const first = await run({ steps: ASKS }, {}, dir);
    const key = first.receipt.permissions!.find((p) => p.evidence.title === 'edit the sibling')!.evidence.key;
    const grants = [{ key, requestId: `t/permission/${key}`, by: 'operator' }];
    const later = await run({ steps: ASKS }, { grants }, dir);
    assert.deepEqual(later.outcomes, [
      ['tc-1', 'allow'],
      ['tc-2', 'deny'],
      ['tc-3', 'allow'],
      ['tc-4', 'allow'],
    ]);
    assert.deepEqual(answers(later.receipt), [
      ['allow', 'private_reversible'],
      ['escalate', 'unknown_consequence'],
      ['allow', 'approved'],
    ]);
  });

  it('answers every request alike when accept or decline is chosen explicitly', async () => {
    const accepted = await run({ steps: ASKS.slice(0, 3) }, { approvals: 'accept' });
    assert.deepEqual(
      accepted.outcomes.map(([, o]) => o),
      ['allow', 'allow'],
    );
    const declined = await run({ steps: ASKS.slice(0, 1) }, { approvals: 'decline' });
    assert.deepEqual(answers(declined.receipt), [['refuse', 'configured_decline']]);
  });
});
