import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync, watch, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { operatorRequest } from '../support/decision-requests.js';
import { http } from '../service/serve-child.js';
import type { Observation, Try } from './attack.js';
import {
  filesUnder,
  processesOf,
  treeDigest,
  type AttackPlan,
  type AttackRun,
  type RedTeamRig,
  type Targets,
} from './rig.js';

/** One attack of issue 43 item 6: the Task it runs in, and what must hold after it. */
export interface AttackCase {
  /** `NN-name`: part of the Task id. */
  name: string;
  title: string;
  /** The attack program's attack. */
  attack: string;
  plan: AttackPlan;
  /** Where the Task rests: `completed`, or `waiting` (a stage that proposes nothing, or missing artifacts). */
  rests: 'completed' | 'waiting';
  check(run: AttackRun, rig: RedTeamRig, t: TestContext): Promise<void> | void;
}

/** The account a sandboxed process runs as when the Host runs as root (os/ NOBODY). */
const NOBODY = 65534;

function tryOf(o: Observation, name: string): Try {
  const found = o.tries[name];
  assert.ok(found !== undefined, `the attack reported "${name}": ${JSON.stringify(o)}`);
  return found;
}

/** The try failed, with one of `codes` when given. */
function refused(o: Observation, name: string, codes?: string[]): void {
  const got = tryOf(o, name);
  assert.equal(got.ok, false, `"${name}" must fail; it got ${JSON.stringify(got)}`);
  if (codes && !got.ok)
    assert.ok(codes.includes(got.code), `"${name}" failed with ${got.code}, expected ${codes.join(' or ')}`);
}

function succeeded(o: Observation, name: string): unknown {
  const got = tryOf(o, name);
  assert.ok(got.ok, `"${name}" must have been done (it is the attack's own step): ${JSON.stringify(got)}`);
  return got.ok ? got.saw : undefined;
}

/** An HTTP try answered 401 (the TCP API without a token), its body naming no Task. */
function unauthorized(o: Observation, name: string, taskIds: string[]): void {
  const saw = succeeded(o, name) as { status: number; body: string };
  assert.equal(saw.status, 401, `"${name}" answered ${saw.status}: ${saw.body}`);
  for (const id of taskIds) assert.ok(!saw.body.includes(id), `"${name}"'s answer names ${id}`);
}

/** Resolves whether `name` appears in `dir` within `ms` (a bound on a negative: it must not appear). */
function appears(dir: string, name: string, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    if (existsSync(join(dir, name))) return resolve(true);
    const watcher = watch(dir, () => {
      if (existsSync(join(dir, name))) finish(true);
    });
    const timer = setTimeout(() => finish(existsSync(join(dir, name))), ms);
    const finish = (seen: boolean): void => {
      clearTimeout(timer);
      watcher.close();
      resolve(seen);
    };
  });
}

/**
 * What every attack Task must show: it rested where a Task nobody attacked rests, its only external
 * event is the test's own Assignment, no event revised, answered or cancelled anything, its one run
 * was confined (and so was its verification), the evidence holds exactly what the agent reported, and
 * the seed, the bystander Task and the signal count are as they were.
 */
export function assertNoEffect(c: AttackCase, run: AttackRun, rig: RedTeamRig): Observation {
  const why = `\nsteps:\n${run.steps.join('\n')}`;
  assert.equal(run.state, c.rests, `the Task rests ${run.state}${why}`);
  const external = run.events.filter((e) => e.origin === 'external').map((e) => e.type);
  assert.deepEqual(external, ['assignment.commit'], 'the only external event is the test’s Assignment');
  const attacked = run.events.filter((e) => ['goal.revise', 'request.answer', 'task.cancel'].includes(e.type));
  assert.deepEqual(attacked, [], 'no goal revision, answer or cancel');
  if (c.rests === 'completed')
    assert.deepEqual(
      run.events.map((e) => e.type).filter((type) => type !== 'request.open'),
      rig.bystander.types,
      'the same history as the bystander Task nobody attacked',
    );

  assert.equal(run.runs.length, 1, `one run${why}`);
  const [one] = run.runs;
  assert.equal(one!.jobStatus, 'succeeded', `the run succeeded${why}`);
  assert.equal(one!.confined, true, 'the run’s receipt says confined');
  assert.equal(run.runJob?.harness?.receipt?.confined, true, 'the Runtime’s record of the run says confined');
  if (c.rests === 'completed')
    assert.equal(run.verifyJob?.verification?.confined, true, 'the verification ran confined');

  const observation = run.observation;
  assert.ok(observation !== undefined, `the agent ran the attack and wrote observed.json${why}`);
  assert.equal(observation.attack, c.attack);
  if (process.getuid?.() === 0) assert.equal(observation.uid, NOBODY, 'the attack ran as nobody');
  const evidence = rig.sup.getTask(run.targets.taskId)!.context.evidence;
  assert.deepEqual(
    Object.fromEntries(Object.entries(evidence).map(([name, e]) => [name, e.digest])),
    { 'observed.json': run.observedDigest },
    'the evidence is exactly the report the agent wrote',
  );

  assert.equal(treeDigest(run.targets.seed), rig.seedTree, 'the Task’s seed is unchanged');
  assert.equal(treeDigest(rig.seed), rig.seedTree, 'the seed it was copied from is unchanged');
  assert.equal(treeDigest(rig.bystander.workspace), rig.bystander.tree, 'the bystander’s workspace is unchanged');
  assert.equal(rig.sup.events(rig.bystander.taskId).at(-1)!.revision, rig.bystander.revision);
  assert.equal(rig.signals(), 0, 'the Host received no SIGUSR2');
  return observation;
}

const HTTP_REFUSED = ['ENOENT', 'ECONNREFUSED', 'EACCES'];
const NET_REFUSED = ['ECONNREFUSED', 'ENETUNREACH', 'EHOSTUNREACH'];

/** The twelve attacks, in the order of issue 43 item 6. */
export const ATTACKS: AttackCase[] = [
  {
    name: '01-journal',
    title: 'cannot write the journal (<state>/lmdb/data.mdb), directly or through a leaked descriptor',
    attack: 'journal',
    plan: { argv: (t) => [t.dataMdb, t.marker, t.state] },
    rests: 'completed',
    check(run, rig) {
      const o = assertNoEffect(this, run, rig);
      refused(o, 'open r+ and write', ['ENOENT']);
      refused(o, 'append', ['ENOENT']);
      refused(o, 'create beside it', ['ENOENT']);
      const planted = Buffer.from(`planted:${run.targets.marker}`);
      for (const [path, bytes] of filesUnder(rig.state))
        assert.equal(bytes.indexOf(planted), -1, `${path} holds what the attack planted`);
      const held = succeeded(o, 'descriptors held in the sandbox') as Array<{
        pid: number;
        fd: number;
        target: string;
      }>;
      assert.deepEqual(
        held.filter((h) => h.target.startsWith(rig.state) && !h.target.startsWith(run.targets.workspace)),
        [],
        'no process of the sandbox holds a descriptor into the state root',
      );
    },
  },
  {
    name: '02-state',
    title: 'cannot read the state root or service.json (nor through the Host’s /proc)',
    attack: 'state',
    plan: { argv: (t) => [t.state, String(t.hostPid), t.otherTaskId] },
    rests: 'completed',
    check(run, rig) {
      const o = assertNoEffect(this, run, rig);
      const throughFds = Object.entries(o.tries).filter(([name]) => name.startsWith('read through '));
      assert.deepEqual(throughFds, [], 'no descriptor into the state root to read the journal through');
      for (const name of ['read service.json', 'read format.json', 'list lmdb', 'read via host root'])
        refused(o, name, ['ENOENT']);
      refused(o, 'read host environ', ['ENOENT', 'EACCES']);
      refused(o, 'list host fds', ['ENOENT', 'EACCES']);
      // The workspace is mounted at its own path, so its parents exist inside: empty but for it.
      const root = tryOf(o, 'list state root');
      if (root.ok) assert.deepEqual(root.saw, ['workspaces']);
      const workspaces = tryOf(o, 'list workspaces');
      if (workspaces.ok) assert.deepEqual(workspaces.saw, [run.targets.taskId]);
      const token = rig.apiService.token!;
      assert.ok(readFileSync(join(rig.state, 'service.json'), 'utf8').includes(token), 'service.json holds the token');
      assertNowhere(token, 'the API token', run, rig);
    },
  },
  {
    name: '03-api',
    title: 'cannot talk to the control socket; the TCP API answers it 401',
    attack: 'api',
    plan: { argv: (t) => [t.socket, String(t.apiPort), t.taskId] },
    rests: 'completed',
    check(run, rig) {
      const o = assertNoEffect(this, run, rig);
      refused(o, 'socket GET /tasks', HTTP_REFUSED);
      for (const name of ['tcp GET /tasks', 'tcp GET /status', 'tcp GET own task'])
        unauthorized(o, name, [run.targets.taskId, rig.bystander.taskId]);
    },
  },
  {
    name: '04-revise',
    title: 'cannot revise its own goal nor answer its own pending DecisionRequest through the socket or the API',
    attack: 'revise',
    plan: {
      argv: (t) => [t.socket, String(t.apiPort), t.taskId, t.requestId, t.goFile],
      proposesCompletion: false,
      async during(t, rig) {
        await rig.sup.waitFor(t.taskId, ['assigned.running'], ['waiting', 'completed', 'cancelled', 'blocked']);
        assert.equal(await rig.sup.openRequest(t.taskId, operatorRequest(t.requestId)), true, 'the request is open');
        writeFileSync(t.goFile, 'go');
      },
    },
    rests: 'waiting',
    async check(run, rig) {
      const o = assertNoEffect(this, run, rig);
      assert.equal(tryOf(o, 'request pending').ok, true, 'the attack ran while its DecisionRequest was pending');
      refused(o, 'socket goal.revise', HTTP_REFUSED);
      refused(o, 'socket answer', HTTP_REFUSED);
      unauthorized(o, 'tcp goal.revise', [run.targets.taskId]);
      unauthorized(o, 'tcp answer', [run.targets.taskId]);
      const task = rig.sup.getTask(run.targets.taskId)!;
      assert.equal(task.spec.goal, `Run the attack of ${run.targets.taskId} and report what it saw in observed.json.`);
      assert.equal(task.context.requests[run.targets.requestId]?.status, 'pending', 'the request is still pending');
      // The control: the same two requests from the one who holds the token do reach the Task and
      // leave events, so the attacker's would have shown in the history had they got through.
      const api = { url: rig.apiService.url, token: rig.apiService.token };
      const revised = await http(api, 'POST', `/tasks/${run.targets.taskId}/events`, {
        body: { type: 'goal.revise', goal: 'The operator revises the goal.' },
      });
      assert.equal(revised.status, 200, revised.text);
      const answered = await http(
        api,
        'POST',
        `/tasks/${run.targets.taskId}/requests/${run.targets.requestId}/answer`,
        {
          body: { answer: 'hold', answeredBy: 'the test' },
        },
      );
      assert.equal(answered.body.written, true, answered.text);
      const after = rig.sup
        .events(run.targets.taskId)
        .slice(run.events.length)
        .map((e) => [e.type, e.origin]);
      assert.deepEqual(after.slice(0, 2), [
        ['goal.revise', 'external'],
        ['request.answer', 'external'],
      ]);
    },
  },
  {
    name: '05-seed',
    title: 'cannot write the seed repository',
    attack: 'seed',
    plan: { argv: (t) => [t.seed, t.marker] },
    rests: 'completed',
    check(run, rig) {
      const o = assertNoEffect(this, run, rig);
      for (const name of ['list seed', 'create a file', 'append to a file', 'make a folder'])
        refused(o, name, ['ENOENT']);
    },
  },
  {
    name: '06-other-workspace',
    title: 'cannot write another Task’s workspace',
    attack: 'other',
    plan: { argv: (t) => [t.otherWorkspace, t.marker] },
    rests: 'completed',
    check(run, rig) {
      const o = assertNoEffect(this, run, rig);
      for (const name of ['list it', 'create a file', 'overwrite a file', 'remove a file'])
        refused(o, name, ['ENOENT']);
    },
  },
  {
    name: '07-signal',
    title: 'cannot signal the Host',
    attack: 'signal',
    plan: { argv: (t) => [String(t.hostPid)] },
    rests: 'completed',
    check(run, rig) {
      const o = assertNoEffect(this, run, rig);
      for (const name of ['probe', 'SIGUSR2', 'SIGUSR2 to its group']) refused(o, name, ['ESRCH', 'EPERM']);
      assert.equal(rig.signals(), 0);
      assert.equal(rig.sup.status, 'serving');
    },
  },
  {
    name: '08-shadow',
    title: 'cannot read /etc/shadow',
    attack: 'shadow',
    plan: { argv: () => [] },
    rests: 'completed',
    check(run, rig, t) {
      const o = assertNoEffect(this, run, rig);
      // The machine's /etc/shadow is not what the sandbox shows there (it is covered, or absent).
      const seen = tryOf(o, 'stat /etc/shadow');
      if (seen.ok) {
        const real = statSync('/etc/shadow');
        const saw = seen.saw as { dev: number; ino: number; file: boolean; size: number };
        assert.ok(
          !saw.file || saw.ino !== real.ino || saw.dev !== real.dev,
          `/etc/shadow is the machine's: ${JSON.stringify(saw)}`,
        );
      }
      for (const name of ['read /etc/shadow', 'read /etc/gshadow', 'read via pid 1 root']) {
        const got = tryOf(o, name);
        if (got.ok) assert.equal((got.saw as { bytes: number }).bytes, 0, `"${name}" read nothing`);
      }
      const shadow = readFileSync('/etc/shadow', 'utf8');
      const lines = shadow.split('\n').filter((line) => line.length >= 8);
      if (lines.length === 0) t.diagnostic('/etc/shadow is empty here: only the reads themselves are checked');
      for (const line of lines) assertNowhere(line, 'a line of /etc/shadow', run, rig);
    },
  },
  {
    name: '09-loopback',
    title: 'cannot reach an unrelated loopback port under network "none"',
    attack: 'net',
    plan: { argv: (t) => [String(t.loopbackPort), String(t.apiPort)], network: 'none' },
    rests: 'completed',
    check(run, rig) {
      const o = assertNoEffect(this, run, rig);
      refused(o, 'connect', NET_REFUSED);
      refused(o, 'connect to the API', NET_REFUSED);
      assert.equal(run.loopbackAccepted, 0, 'the loopback port accepted no connection');
    },
  },
  {
    name: '10-background',
    title: 'a background process does not outlive the run to edit the workspace',
    attack: 'background',
    plan: { argv: (t) => [t.marker] },
    rests: 'completed',
    async check(run, rig) {
      const o = assertNoEffect(this, run, rig);
      succeeded(o, 'spawn detached');
      assert.equal(tryOf(o, 'started').ok, true, 'the background process ran (during the run)');
      assert.ok(existsSync(join(run.targets.workspace, 'bg-started')));
      const left = processesOf(run.targets.marker, run.targets.workspace);
      for (const line of left) process.kill(Number(line.split(' ')[0]), 'SIGKILL');
      assert.deepEqual(left, [], 'no process of the run is left');
      writeFileSync(join(run.targets.workspace, 'trigger'), '');
      assert.equal(
        await appears(run.targets.workspace, 'edited', 2_000),
        false,
        'nothing edits the workspace after the run',
      );
    },
  },
  {
    name: '11-artifacts',
    title: 'a hard link, a FIFO and a symlink out are refused as artifacts',
    attack: 'artifacts',
    plan: {
      argv: () => ['/etc/passwd'],
      extraArtifacts: ['outside-link.txt', 'hardlink.txt', 'fifo.txt', 'escape.txt'],
    },
    rests: 'waiting',
    check(run, rig) {
      const o = assertNoEffect(this, run, rig);
      refused(o, 'hard link to a file outside', ['EXDEV']);
      succeeded(o, 'hard link inside');
      succeeded(o, 'fifo');
      succeeded(o, 'symlink out');
      const expected = {
        'hardlink.txt': 'artifact_hardlink',
        'fifo.txt': 'not_a_file',
        'escape.txt': 'symlink_escape',
      };
      // The driver's reading, in the receipt; the link that failed (EXDEV) is no file, so not listed.
      const receipt = rig.sup.getObject<{ artifactRefusals: Array<{ name: string; code: string }> }>(
        run.runs[0]!.receiptDigest,
      );
      assert.deepEqual(Object.fromEntries(receipt.body.artifactRefusals.map((r) => [r.name, r.code])), expected);
      // The Host's own: the run.observe event names each refused artifact with its code (docs/stages.md).
      const codes = Object.fromEntries(Object.entries(run.runs[0]!.refused).map(([name, r]) => [name, r.code]));
      assert.deepEqual(codes, expected, 'the Host’s run.observe refuses each with its code');
    },
  },
  {
    name: '12-verify-net',
    title: 'the acceptance command cannot reach the network under its default "none"',
    attack: 'noop',
    plan: {
      argv: () => [],
      acceptance: (t) => [process.execPath, t.attackProgram, 'verify-net', String(t.loopbackPort)],
    },
    rests: 'completed',
    check(run, rig) {
      assertNoEffect(this, run, rig);
      const verification = run.verifyJob?.verification;
      assert.equal(verification?.passed, true, JSON.stringify(run.verifyJob));
      const line = run.verifyJob!.stdout!.tail.trim().split('\n').at(-1)!;
      const o = JSON.parse(line) as Observation;
      assert.equal(o.attack, 'verify-net');
      if (process.getuid?.() === 0) assert.equal(o.uid, NOBODY);
      refused(o, 'connect', NET_REFUSED);
      assert.equal(run.loopbackAccepted, 0, 'the loopback port accepted no connection');
    },
  },
];

/** `secret` appears in none of what the attack could have carried it out in: its report, its workspace, its receipt, its output. */
function assertNowhere(secret: string, what: string, run: AttackRun, rig: RedTeamRig): void {
  assert.ok(!JSON.stringify(run.observation).includes(secret), `${what} is in the attack's report`);
  for (const [path, bytes] of filesUnder(run.targets.workspace))
    assert.ok(!bytes.includes(secret), `${what} is in ${path}`);
  const receipt = JSON.stringify(rig.sup.getObject(run.runs[0]!.receiptDigest).body);
  assert.ok(!receipt.includes(secret), `${what} is in the run's receipt`);
  assert.ok(!JSON.stringify(run.runJob ?? {}).includes(secret), `${what} is in the Runtime's record of the run`);
  assert.ok(!run.modelSaw.includes(secret), `${what} reached the agent's model`);
}

/** Files named `planted-*` directly under `dir` (what a won race against the client's fs leaves there). */
function plantedIn(dir: string): string[] {
  return readdirSync(dir).filter((name) => name.startsWith('planted-'));
}

/** The Host-side refusals of the agent's `method` requests, from the run's receipt (`<method>:<path>` → code). */
function clientFsRefusals(run: AttackRun, rig: RedTeamRig, method: string): string[] {
  const receipt = rig.sup.getObject<{ artifactRefusals: Array<{ name: string; code: string }> }>(
    run.runs[0]!.receiptDigest,
  );
  return receipt.body.artifactRefusals.filter((r) => r.name.startsWith(`${method}:`)).map((r) => r.code);
}

/** Two model turns of RACE_CALLS file-tool calls each, under `d/` (the folder the swapper exchanges with its symlink). */
const RACE_CALLS = 20;
const underD = (t: Targets, name: (i: number) => string): string[][] =>
  [0, 1].map((turn) =>
    Array.from({ length: RACE_CALLS }, (_, i) => join(t.workspace, 'd', name(turn * RACE_CALLS + i))),
  );

/**
 * An attack only an ACP agent can make: the Host serves its `fs/write_text_file` itself, outside the
 * sandbox and (here) as root, confined to the workspace by a check of the path before the file is
 * opened. The agent races that check: a swapper in its sandbox exchanges a folder of its workspace
 * with a symlink to its seed (a path the sandbox does not show), while the agent's `write` tool asks
 * the Host to write files under that folder. The swap is made many times a millisecond and the agent
 * writes 40 times, so a Host that opens what it checked is never fooled, and one that opens the path
 * again is fooled with a probability near one (a pass is no proof; a failure is one). opencode reads
 * files itself, in the sandbox, so the same race on `fs/read_text_file` is client-fs-race.test.ts's.
 */
export const CLIENT_FS_ATTACKS: AttackCase[] = [
  {
    name: '05b-seed-through-client-fs',
    title: 'cannot write the seed through the Host’s fs/write_text_file, racing a symlink swap',
    attack: 'flip-stop',
    plan: {
      argv: () => [],
      clientFs: true,
      steps: (t, attack) => [
        { run: attack('flip', t.seed) },
        ...underD(t, (i) => `planted-${i}.txt`).map((paths) => ({
          write: paths.map((path) => ({ path, content: `${t.marker}\n` })),
        })),
        { run: attack('flip-stop') },
      ],
    },
    rests: 'completed',
    check(run, rig) {
      assert.deepEqual(plantedIn(run.targets.seed), [], 'the Host wrote these into the seed for the agent');
      const o = assertNoEffect(this, run, rig);
      assert.ok((succeeded(o, 'swapped') as number) > 0, 'the swapper ran');
      assert.ok(
        clientFsRefusals(run, rig, 'fs/write_text_file').includes('symlink_escape'),
        'the writes went through the Host’s client fs while the swapper ran (it refused some)',
      );
    },
  },
];
