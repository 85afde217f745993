import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openHost, type Host } from '../../host/host.js';
import { HostError, parseTaskSpec } from '../../kernel/index.js';
import { checkPlan } from '../../cli/run-plan.js';
import { ACCEPT_X2, branchAgents, fanOutSpec, type BranchAgents } from '../support/branch-agent.js';
import { tempDir } from '../support/temp.js';
import { journalHas } from '../support/wait.js';
import { ordivon } from '../cli/run-fixture.js';

type Events = ReturnType<Host['supervisor']['events']>;

/** A spec whose stage `fix` runs the given harnesses side by side. */
function parallelSpec(agents: BranchAgents, taskId: string, parallel: string[], join?: 'all') {
  return {
    taskId,
    title: 'Make x equal 2',
    goal: 'The module a.js exports x; make it 2 and report.',
    requiredArtifacts: [{ name: 'report.md', kind: 'text' as const, pattern: '^# ' }],
    stages: [{ name: 'fix', produces: ['report.md'], proposesCompletion: true, parallel, ...(join ? { join } : {}) }],
    result: 'report.md',
    workspaceSeed: agents.seed,
    acceptance: ACCEPT_X2,
  };
}

function boot(agents: BranchAgents, env?: Record<string, string>): Promise<Host> {
  return openHost({ state: join(agents.dir, 'state'), harnesses: agents.harnesses(env) as never });
}

const ofType = (events: Events, type: string) => events.filter((e) => e.type === type);

/** Every child's dispatch intents: each request id at most once, and each child's count. */
function dispatches(host: Host, children: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const child of children) {
    const ids = ofType(host.supervisor.events(child), 'dispatch.intend').map((e) => String(e.data['clientRequestId']));
    assert.equal(new Set(ids).size, ids.length, `${child}: a request id dispatched twice`);
    counts[child] = ids.length;
  }
  return counts;
}

describe('parallel Attempts of a stage', { timeout: 180_000 }, () => {
  it('first_verified: the first verified child wins and its work is merged; the one verification refused is evidence; the one still running is cancelled and its late end refused superseded', async () => {
    const agents = branchAgents(tempDir('ordivon-branch-'));
    const host = await boot(agents);
    try {
      const sup = host.supervisor;
      await sup.createTask(parallelSpec(agents, 'best', ['wrong', 'gated', 'hang']));
      // The Assignment names one harness; the stage's spec names the Attempts.
      assert.equal(
        (await sup.send('best', { type: 'assignment.commit', harness: 'wrong', stage: 'fix' })).admitted,
        true,
      );
      const [wrong, gated, hang] = ['best.g1.1-wrong', 'best.g1.2-gated', 'best.g1.3-hang'];
      await sup.waitFor(wrong, ['waiting']);
      await agents.hanging(1);
      // Only now may the right fix finish: the order of the ends is the test's, not the scheduler's.
      await agents.open();
      assert.equal(await sup.waitFor('best', ['completed']), 'completed');

      const events = sup.events('best');
      const observed = ofType(events, 'branch.observe');
      assert.deepEqual(
        observed.map((e) => [e.data['child'], e.data['state'], e.data['verified'], e.disposition.admitted]),
        [
          [wrong, 'waiting', false, true],
          [gated, 'completed', true, true],
          [hang, 'cancelled', false, false],
        ],
      );
      assert.match(String(observed[0]!.data['detail']), /^verification_failed/);
      const late = observed[2]!;
      assert.deepEqual(late.disposition, { admitted: false, code: 'superseded' });
      const joins = ofType(events, 'branch.join');
      assert.equal(joins.length, 1, 'the join commits once');
      assert.ok(late.revision > joins[0]!.revision, 'the cancelled Attempt ended after the join');
      assert.deepEqual(joins[0]!.data['winners'], [gated]);
      assert.match(String(joins[0]!.data['reason']), /verified first/);
      // The winner's outcome is bound in the parent's history; its work is the parent's, verified again there.
      assert.equal(observed[1]!.data['outcomeDigest'], sup.getTask(gated)!.context.outcome!.digest);
      const task = sup.getTask('best')!;
      assert.equal(task.context.branch!.winners![0], gated);
      assert.equal(task.context.verification!.passed, true);
      const outcome = sup.getObject<{ result: string }>(task.context.outcome!.digest).body;
      assert.equal(outcome.result, '# fixed by gated\n');
      assert.equal(sup.getTask(hang)!.state, 'cancelled');
      assert.equal(sup.getTask(wrong)!.context.lastRejection!.reason, 'verification_failed');
      assert.deepEqual(dispatches(host, [wrong, gated, hang]), { [wrong]: 1, [gated]: 1, [hang]: 1 });
      const [hangJob] = await host.runtime.findJobs({ clientRequestId: `${hang}/a1/g1/run` });
      assert.equal(hangJob!.state, 'cancelled', 'the cancelled Attempt no longer runs');
      assert.equal(sup.getTask(gated)!.spec.labels['ordivon.parent'], 'best');
    } finally {
      await host.stop();
    }
    // `ordivon show` draws the tree: each child's state, generation, verification and why it won or lost.
    const shown = ordivon(agents.dir, 'show', 'best', '--state', 'state');
    assert.equal(shown.status, 0, shown.stderr);
    assert.match(
      shown.stdout,
      /branch best\/a1\/g1\/branch \(parallel, join first_verified\): joined, best\.g1\.2-gated \(best\.g1\.2-gated was verified first\)/,
    );
    assert.match(
      shown.stdout,
      /├ best\.g1\.1-wrong +wrong +waiting g1 +unverified +lost: ended waiting: verification_failed: exit 1/,
    );
    assert.match(
      shown.stdout,
      /├ best\.g1\.2-gated +gated +completed g1 +verified +won: best\.g1\.2-gated was verified first/,
    );
    assert.match(
      shown.stdout,
      /└ best\.g1\.3-hang +hang +cancelled g1 +unverified +cancelled: ended cancelled after the join: superseded/,
    );
    const json = ordivon(agents.dir, 'show', 'best', '--state', 'state', '--json').json();
    assert.deepEqual(
      json.branch.children.map((c: { outcome: string }) => c.outcome),
      ['lost', 'won', 'cancelled'],
    );
  });

  it('all: every Attempt ends; with two verified a person picks, and the pick is what is merged', async () => {
    const agents = branchAgents(tempDir('ordivon-branch-'));
    const host = await boot(agents);
    try {
      const sup = host.supervisor;
      await sup.createTask(parallelSpec(agents, 'pick', ['right', 'right2', 'wrong'], 'all'));
      await sup.send('pick', { type: 'assignment.commit', harness: 'right', stage: 'fix' });
      const requestId = 'pick/a1/g1/branch/pick';
      // The pick is the branch's one DecisionRequest.
      await journalHas(sup, 'pick', 'request.open');
      const request = sup.getTask('pick')!.context.requests[requestId]!;
      const asked = sup.getObject<{ allowed: string[]; evidence: string[] }>(request.digest).body;
      assert.deepEqual(
        asked.allowed,
        ['pick.g1.1-right', 'pick.g1.2-right2'],
        'the verified Attempts, in the order they are listed',
      );
      assert.equal(asked.evidence.length, 2);
      const answered = await sup.send('pick', { type: 'request.answer', requestId, answer: 'pick.g1.2-right2' });
      assert.equal(answered.admitted, true);
      assert.equal(await sup.waitFor('pick', ['completed']), 'completed');
      const joins = ofType(sup.events('pick'), 'branch.join');
      assert.equal(joins.length, 1);
      assert.deepEqual(joins[0]!.data['winners'], ['pick.g1.2-right2']);
      const outcome = sup.getObject<{ result: string }>(sup.getTask('pick')!.context.outcome!.digest).body;
      assert.equal(outcome.result, '# fixed by right2\n');
    } finally {
      await host.stop();
    }
  });

  it('no Attempt verified: the join is not met, retained join_unsatisfied, and the parent waits', async () => {
    const agents = branchAgents(tempDir('ordivon-branch-'));
    const host = await boot(agents);
    try {
      const sup = host.supervisor;
      await sup.createTask(parallelSpec(agents, 'none', ['right', 'right2']));
      // An Assignment naming `a+b` runs those harnesses, whatever the spec lists; one harness twice is two Attempts.
      assert.equal(
        (await sup.send('none', { type: 'assignment.commit', harness: 'wrong+wrong', stage: 'fix' })).admitted,
        true,
      );
      assert.equal(await sup.waitFor('none', ['waiting']), 'waiting');
      const joins = ofType(sup.events('none'), 'branch.join');
      assert.deepEqual(
        joins.map((e) => [e.data['winners'], e.disposition]),
        [[[], { admitted: false, code: 'join_unsatisfied' }]],
      );
      assert.equal(sup.getTask('none')!.context.lastRejection!.reason, 'join_unsatisfied');
      assert.deepEqual(Object.keys(sup.getTask('none')!.context.branch!.children), [
        'none.g1.1-wrong',
        'none.g1.2-wrong',
      ]);
      assert.equal(sup.getTask('none')!.context.outcome, null);
      // The next Assignment's Context binds the ended branch's children: their ends and outcomes.
      await sup.send('none', { type: 'assignment.commit', harness: 'right', stage: 'fix' });
      assert.equal(await sup.waitFor('none', ['completed']), 'completed');
      const g2 = ofType(sup.events('none'), 'context.compile').find((e) => e.data['generation'] === 2)!;
      const prompt = sup.getObject<{ text: string }>(String(g2.data['promptDigest'])).body.text;
      assert.match(
        prompt,
        /Child Tasks of branch none\/a1\/g1\/branch \(parallel, join first_verified\): 0 of 2 children verified; first_verified needs 1/,
      );
      assert.match(prompt, /- none\.g1\.1-wrong \(wrong\): waiting, unverified, outcome none/);
      assert.deepEqual(Object.keys(sup.getTask('none')!.context.branch!.children), [
        'none.g2.1-right',
        'none.g2.2-right2',
      ]);
    } finally {
      await host.stop();
    }
  });
});

describe('a branch that cannot be opened', () => {
  it('children whose ids would pass 128 characters: branch_invalid at dispatch, no fan-out intent written, an operator asked', async () => {
    const agents = branchAgents(tempDir('ordivon-branch-'));
    const host = await openHost({
      state: join(agents.dir, 'state'),
      harnesses: agents.harnesses() as never,
      frontierRetry: { attempts: 1 },
    });
    try {
      const sup = host.supervisor;
      const parent = 'p'.repeat(118);
      await sup.createTask(parallelSpec(agents, parent, ['right', 'right2']));
      await sup.send(parent, { type: 'assignment.commit', harness: 'right+wrong', stage: 'fix' });
      await until(host, parent, 'request.open', 1);
      const asked = ofType(sup.events(parent), 'request.open')[0]!;
      const request = JSON.stringify(sup.getObject(String(asked.data['requestDigest'])).body);
      assert.match(request, /branch_invalid/);
      assert.match(request, /is not a Task id \(at most 128 characters\)/);
      assert.deepEqual(ofType(sup.events(parent), 'branch.open'), []);
      assert.equal(sup.listTasks().length, 1, 'no child created');
    } finally {
      await host.stop();
    }
  });
});

/** Resolves once the parent's history holds `n` events of `type`. */
function until(host: Host, taskId: string, type: string, n: number): Promise<void> {
  const sup = host.supervisor;
  return new Promise((resolve) => {
    const check = () => ofType(sup.events(taskId), type).length >= n && (off(), resolve());
    const off = sup.subscribe((c) => c.taskId === taskId && check(), { remote: 'none' });
    check();
  });
}

describe('child Tasks fanned out over a list', { timeout: 180_000 }, () => {
  it('one child per item, each a full Task; join all merges every child`s work; a restart with the join half met dispatches nothing twice and joins once', async () => {
    const agents = branchAgents(tempDir('ordivon-fanout-'));
    const env = { LIST: JSON.stringify(['a', 'b', 'c']), GATED_ITEM: 'c' };
    const children = ['fan.g2.1', 'fan.g2.2', 'fan.g2.3'];
    const first = await boot(agents, env);
    try {
      const sup = first.supervisor;
      await sup.createTask(fanOutSpec(agents, 'fan'));
      await sup.send('fan', { type: 'assignment.commit', harness: 'list', stage: 'list' });
      assert.equal(await sup.waitFor('fan', ['waiting']), 'waiting');
      await sup.send('fan', { type: 'assignment.commit', harness: 'item', stage: 'fix' });
      // Two children end; the third waits at its gate: the join is half met.
      await until(first, 'fan', 'branch.observe', 2);
      assert.equal(sup.getTask('fan.g2.3')!.state, 'assigned.running');
    } finally {
      await first.stop();
    }
    const second = await boot(agents, env);
    try {
      const sup = second.supervisor;
      assert.equal(sup.getTask('fan')!.state, 'assigned.branching');
      await agents.open();
      assert.equal(await sup.waitFor('fan', ['completed']), 'completed');
      const events = sup.events('fan');
      const joins = ofType(events, 'branch.join');
      assert.equal(joins.length, 1, 'the join commits once');
      // Winners are listed in the order they were verified: a and b's order is the scheduler's.
      assert.deepEqual([...(joins[0]!.data['winners'] as string[])].sort(), children);
      assert.equal((joins[0]!.data['winners'] as string[])[2], 'fan.g2.3', 'the gated child, verified last');
      assert.deepEqual(joins[0]!.data['merged'], ['fixed/a.txt', 'fixed/b.txt', 'fixed/c.txt']);
      const observed = ofType(events, 'branch.observe');
      assert.deepEqual(observed.map((e) => e.data['child']).sort(), children);
      for (const e of observed)
        assert.equal(e.data['outcomeDigest'], sup.getTask(String(e.data['child']))!.context.outcome!.digest);
      assert.deepEqual(
        ofType(events, 'branch.open').map((e) => (e.data['children'] as Array<{ item: string }>).map((c) => c.item)),
        [['a', 'b', 'c']],
      );
      // Each child is a full Task of the template: its own goal, artifact and outcome.
      assert.equal(sup.getTask('fan.g2.2')!.spec.goal, 'Fix the defect ITEM=b.');
      const counts = dispatches(second, children);
      // The child stopped with the Host was dispatched again under its next generation, never under the same id.
      assert.deepEqual(counts, { 'fan.g2.1': 1, 'fan.g2.2': 1, 'fan.g2.3': 2 });
      assert.equal(
        readFileSync(join(agents.dir, 'state', 'workspaces', 'fan', 'attempt-1', 'fixed', 'b.txt'), 'utf8'),
        'fixed b\n',
      );
    } finally {
      await second.stop();
    }
  });

  it('with no run limit set, every Attempt runs at once: three agents that never end all start', async () => {
    const agents = branchAgents(tempDir('ordivon-branch-'));
    const host = await boot(agents);
    try {
      const sup = host.supervisor;
      await sup.createTask(parallelSpec(agents, 'wide', ['right', 'right2', 'wrong']));
      await sup.send('wide', { type: 'assignment.commit', harness: 'hang+hang+hang', stage: 'fix' });
      // Each run holds a driver-pool thread while it runs: a pool smaller than three never starts the third.
      await agents.hanging(3);
      await sup.send('wide', { type: 'task.cancel', reason: 'seen' });
      assert.equal(await sup.waitFor('wide.g1.3-hang', ['cancelled'], []), 'cancelled');
    } finally {
      await host.stop();
    }
  });

  it('cancelling the parent cancels its children', async () => {
    const agents = branchAgents(tempDir('ordivon-fanout-'));
    const host = await boot(agents);
    try {
      const sup = host.supervisor;
      await sup.createTask(parallelSpec(agents, 'stop', ['right', 'right2']));
      await sup.send('stop', { type: 'assignment.commit', harness: 'hang+hang', stage: 'fix' });
      await agents.hanging(2);
      await sup.send('stop', { type: 'task.cancel', reason: 'not needed' });
      for (const child of ['stop.g1.1-hang', 'stop.g1.2-hang'])
        assert.equal(await sup.waitFor(child, ['cancelled'], []), 'cancelled');
      assert.match(String(sup.getTask('stop.g1.1-hang')!.context.cancelReason), /parent stop was cancelled/);
    } finally {
      await host.stop();
    }
  });
});

describe('a branch stage that does not parse', () => {
  const base = {
    title: 't',
    goal: 'g',
    requiredArtifacts: [{ name: 'items.json' }, { name: 'report.md', kind: 'text' }],
  };
  const template = { title: 'Fix {{item}}', goal: 'Fix {{item}}.', requiredArtifacts: [{ name: 'out.json' }] };
  const cases: Array<[string, object[], string]> = [
    [
      'parallel and fanOut both',
      [
        { name: 'list', produces: ['items.json'] },
        { name: 'fix', produces: ['report.md'], parallel: ['a', 'b'], fanOut: { from: 'items.json', spec: template } },
      ],
      'stages.1.fanOut',
    ],
    ['join without parallel', [{ name: 'fix', produces: ['report.md'], join: 'all' }], 'stages.0.join'],
    ['a parallel stage producing nothing', [{ name: 'fix', parallel: ['a', 'b'] }], 'stages.0.produces'],
    [
      'one harness named twice',
      [{ name: 'fix', produces: ['report.md'], parallel: ['a', 'a'] }],
      'stages.0.parallel.1',
    ],
    [
      'a harness name with "+"',
      [{ name: 'fix', produces: ['report.md'], parallel: ['a+b', 'c'] }],
      'stages.0.parallel.0',
    ],
    [
      'an unknown join',
      [{ name: 'fix', produces: ['report.md'], parallel: ['a', 'b'], join: 'best' }],
      'stages.0.join',
    ],
    [
      'a list the stage itself produces',
      [{ name: 'fix', produces: ['items.json'], fanOut: { from: 'items.json', spec: template } }],
      'stages.0.fanOut.from',
    ],
    [
      'a list that is not a required artifact',
      [{ name: 'fix', fanOut: { from: 'nope.json', spec: template } }],
      'stages.0.fanOut.from',
    ],
    [
      "a template that is no spec (refused at the template's field)",
      [
        { name: 'list', produces: ['items.json'] },
        { name: 'fix', fanOut: { from: 'items.json', spec: { ...template, goal: '' } } },
      ],
      'stages.1.fanOut.spec.goal',
    ],
    [
      'a template of two stages',
      [
        { name: 'list', produces: ['items.json'] },
        {
          name: 'fix',
          fanOut: {
            from: 'items.json',
            spec: { ...template, stages: [{ name: 'a', produces: ['out.json'] }, { name: 'b' }] },
          },
        },
      ],
      'stages.1.fanOut.spec.stages',
    ],
  ];
  for (const [what, stages, path] of cases)
    it(`${what}: invalid_spec at ${path}, nothing written`, () => {
      assert.throws(
        () => parseTaskSpec({ ...base, stages }),
        (error: unknown) => error instanceof HostError && error.code === 'invalid_spec' && error.path === path,
      );
    });

  it('takes {{item}} anywhere in a template, its stage instructions too', () => {
    const spec = parseTaskSpec({
      ...base,
      stages: [
        { name: 'list', produces: ['items.json'] },
        {
          name: 'fix',
          fanOut: {
            from: 'items.json',
            spec: { ...template, stages: [{ name: 'one', instructions: 'Fix {{item}}, then {{stage.artifacts}}' }] },
          },
        },
      ],
    });
    assert.equal(spec.stages![1]!.fanOut!.join, 'all');
  });

  it('ordivon run refuses a+b on a fan-out stage (branch_invalid) and an unknown harness among them (harness_unknown), at --stages[i], before anything opens', () => {
    const spec = parseTaskSpec({
      ...base,
      stages: [
        { name: 'list', produces: ['items.json'] },
        { name: 'fix', produces: ['report.md'], fanOut: { from: 'items.json', spec: template } },
      ],
    });
    const harnesses = { a: { driver: 'command' }, b: { driver: 'command' } };
    const refused = (plan: Array<{ stage: string; harness: string }>) => {
      try {
        checkPlan(plan, spec, harnesses);
        return null;
      } catch (error) {
        return [(error as { code: string }).code, (error as { path?: string }).path];
      }
    };
    assert.deepEqual(refused([{ stage: 'fix', harness: 'a+b' }]), ['branch_invalid', '--stages[0]']);
    assert.deepEqual(refused([{ stage: 'list', harness: 'a+c' }]), ['harness_unknown', '--stages[0]']);
    assert.equal(
      refused([
        { stage: 'list', harness: 'a+b' },
        { stage: 'fix', harness: 'a' },
      ]),
      null,
    );
  });
});
