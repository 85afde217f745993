import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openHost, type Host } from '../../host/host.js';
import { ACCEPT_X2, branchAgents, type BranchAgents } from '../support/branch-agent.js';
import { tempDir } from '../support/temp.js';
import { CLI } from './run-fixture.js';

const HOST_MODULE = fileURLToPath(new URL('../../host/index.js', import.meta.url));

/**
 * The Host SIGKILLed at the points of a fan-out, through the real `ordivon run`: after the fan-out
 * intent (no child created yet), and with children running. After the next run every child is
 * reconciled, no request id is dispatched twice, and the join commits once.
 */

function spec(agents: BranchAgents, parallel: string[]) {
  return {
    taskId: 'crash',
    title: 'Make x equal 2',
    goal: 'The module a.js exports x; make it 2 and report.',
    requiredArtifacts: [{ name: 'report.md', kind: 'text', pattern: '^# ' }],
    stages: [{ name: 'fix', produces: ['report.md'], proposesCompletion: true, parallel }],
    result: 'report.md',
    workspaceSeed: agents.seed,
    acceptance: ACCEPT_X2,
  };
}

/** Writes the spec and the config; answers the `ordivon run` arguments that resume the Task. */
function prepare(agents: BranchAgents, parallel: string[]): string[] {
  writeFileSync(join(agents.dir, 'spec.json'), JSON.stringify(spec(agents, parallel)));
  writeFileSync(join(agents.dir, 'ordivon.config.json'), JSON.stringify({ harnesses: agents.harnesses() }));
  return ['run', '--spec', 'spec.json', '--stages', 'fix=gated', '--state', 'state', '--quiet'];
}

/**
 * A Host process that runs the Task and SIGKILLs itself the moment the parent's `type` event is
 * committed: a commit's subscribers hear it before any frontier work it starts, so the kill lands
 * exactly after that commit and before the next step.
 */
const DRIVER = `
const { openHost } = await import(process.env.HOST_MODULE);
const fs = await import('node:fs');
const config = JSON.parse(fs.readFileSync('ordivon.config.json', 'utf8'));
const host = await openHost({ state: 'state', harnesses: config.harnesses });
const sup = host.supervisor;
let seen = 0;
sup.subscribe((c) => {
  if (c.taskId === 'crash' && c.type === process.env.KILL_AT && ++seen === Number(process.env.KILL_COUNT)) process.kill(process.pid, 'SIGKILL');
});
await sup.createTask(JSON.parse(fs.readFileSync('spec.json', 'utf8')));
await sup.send('crash', { type: 'assignment.commit', harness: 'gated', stage: 'fix' });
await sup.waitFor('crash', ['completed']);
await host.stop();
`;

/** Runs the driver until it kills itself at the `count`th `type` commit of the parent. */
function runKilledAt(agents: BranchAgents, type: string, count = 1): Promise<string | null> {
  writeFileSync(join(agents.dir, 'driver.mjs'), DRIVER);
  const child = spawn(process.execPath, ['driver.mjs'], {
    cwd: agents.dir,
    stdio: 'ignore',
    env: { ...process.env, HOST_MODULE: HOST_MODULE, KILL_AT: type, KILL_COUNT: String(count) },
  });
  return new Promise((resolve) => child.once('close', (_code, signal) => resolve(signal)));
}

/** `ordivon run` resuming the Task to its end, the gate opened for the gated Attempt's next run. */
async function resume(agents: BranchAgents, args: string[], gated: boolean): Promise<number | null> {
  const before = agents.runs().filter((mode) => mode === 'gated').length;
  const child = spawn(process.execPath, [CLI, ...args], { cwd: agents.dir, stdio: 'ignore' });
  const ended = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  if (gated) {
    // Opened only once the next run has started: the killed Host's run may still hold the gate for
    // the few milliseconds its sandbox takes to die, and would take the one opening.
    await agents.started('gated', before + 1);
    await agents.open();
  }
  return ended;
}

/** The history after the runs, read by a Host of its own on the state root: answers each child's dispatch count. */
async function check(
  agents: BranchAgents,
  children: string[],
  winner = children.find((c) => c.endsWith('-gated')),
  more: (events: ReturnType<Host['supervisor']['events']>) => void = () => {},
): Promise<Record<string, number>> {
  const host: Host = await openHost({ state: join(agents.dir, 'state'), harnesses: {} });
  try {
    const sup = host.supervisor;
    assert.equal(sup.getTask('crash')!.state, 'completed');
    const events = sup.events('crash');
    assert.equal(events.filter((e) => e.type === 'branch.open').length, 1, 'one fan-out intent');
    const joins = events.filter((e) => e.type === 'branch.join');
    assert.equal(joins.length, 1, 'the join commits once');
    assert.equal(joins[0]!.disposition.admitted, true);
    assert.deepEqual(joins[0]!.data['winners'], [winner]);
    const counts: Record<string, number> = {};
    for (const child of children) {
      assert.ok(sup.getTask(child), `${child} exists`);
      const ids = sup
        .events(child)
        .filter((e) => e.type === 'dispatch.intend')
        .map((e) => String(e.data['clientRequestId']));
      assert.equal(new Set(ids).size, ids.length, `${child}: a request id dispatched twice`);
      for (const id of ids)
        assert.ok((await host.runtime.findJobs({ clientRequestId: id })).length <= 1, `${id}: one job`);
      counts[child] = ids.length;
    }
    assert.equal(sup.listTasks().length, children.length + 1, 'no child lost, none made twice');
    const hang = children.find((c) => c.endsWith('-hang'))!;
    assert.equal(sup.getTask(hang)!.state, 'cancelled');
    more(events);
    return counts;
  } finally {
    await host.stop();
  }
}

describe('the Host SIGKILLed during a fan-out', { timeout: 240_000 }, () => {
  it('after the fan-out intent, before any child exists: the next run creates each child once and joins once', async () => {
    const agents = branchAgents(tempDir('ordivon-branch-crash-'));
    const args = prepare(agents, ['gated', 'hang']);
    assert.equal(await runKilledAt(agents, 'branch.open'), 'SIGKILL');
    assert.equal(await resume(agents, args, true), 0);
    const counts = await check(agents, ['crash.g1.1-gated', 'crash.g1.2-hang']);
    assert.deepEqual(counts, { 'crash.g1.1-gated': 1, 'crash.g1.2-hang': 1 });
  });

  it('with the join half met (one Attempt ended, two running): every child is reconciled, none dispatched twice, the join once', async () => {
    const agents = branchAgents(tempDir('ordivon-branch-crash-'));
    const args = prepare(agents, ['wrong', 'gated', 'hang']);
    assert.equal(await runKilledAt(agents, 'branch.observe'), 'SIGKILL');
    assert.equal(await resume(agents, args, true), 0);
    const counts = await check(agents, ['crash.g1.1-wrong', 'crash.g1.2-gated', 'crash.g1.3-hang']);
    assert.equal(counts['crash.g1.1-wrong'], 1, 'the ended Attempt is not run again');
  });

  it('right after the join commit: the next run completes the parent without a second join or run', async () => {
    const agents = branchAgents(tempDir('ordivon-branch-crash-'));
    const args = prepare(agents, ['wrong', 'right', 'hang']);
    assert.equal(await runKilledAt(agents, 'branch.join'), 'SIGKILL');
    assert.equal(await resume(agents, args, false), 0);
    const counts = await check(
      agents,
      ['crash.g1.1-wrong', 'crash.g1.2-right', 'crash.g1.3-hang'],
      'crash.g1.2-right',
      (events) => {
        // The cancelled Attempt's end, left unrecorded by the kill, is recorded by the next run: superseded.
        const late = events.filter((e) => e.type === 'branch.observe' && e.data['child'] === 'crash.g1.3-hang');
        assert.deepEqual(
          late.map((e) => e.disposition),
          [{ admitted: false, code: 'superseded' }],
        );
      },
    );
    assert.deepEqual(counts, { 'crash.g1.1-wrong': 1, 'crash.g1.2-right': 1, 'crash.g1.3-hang': 1 });
  });
});
