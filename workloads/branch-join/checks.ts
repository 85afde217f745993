import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { clientRequestId } from '../../frontier/index.js';
import { OBJECT_KINDS } from '../../objects/index.js';
import { createRuntime, workspacePath, type Runtime } from '../../runtime/index.js';
import { EventStore } from '../../store/index.js';
import { loadWorkload } from '../../cli/workload.js';
import { demoConfinement } from '../shared/confinement.js';
import { DEFECTS, REVIEW_ITEM, defectFixes, durationFixes } from './kit.js';
import { ATTEMPTS, type BranchJoinPart, type DrivenTasks } from './specs.js';

/** One expectation of the demo: what must hold, whether it did, and what was observed. */
export interface BranchJoinExpectation {
  part: BranchJoinPart;
  what: string;
  held: boolean;
  observed: string;
}

interface Event {
  revision: number;
  type: string;
  data: Record<string, unknown>;
  disposition: { admitted: boolean; code?: string };
}

/** What the demo reads of a Task's projection. */
interface Read {
  state: string;
  spec: { title: string; goal: string; labels: Record<string, string> };
  context: {
    generation: number;
    attempt: number;
    outcome: { digest: string } | null;
    verification: { passed: boolean } | null;
    lastRejection: { reason: string } | null;
    evidence: Record<string, { digest: string }>;
  };
  events: Event[];
}

function reader(store: EventStore): (taskId: string) => Read | undefined {
  return (taskId) => {
    const projection = store.projection(taskId);
    if (!projection) return undefined;
    const { context } = projection.snapshot as { context: Read['context'] & { specDigest: string } };
    const events = [...store.stream(taskId)].map(({ revision, event }) => ({ revision, ...event }) as Event);
    const spec = store.getObject<Read['spec']>(context.specDigest, 'task-spec').body;
    return { state: projection.state, spec, context, events };
  };
}

const ofType = (events: Event[], type: string) => events.filter((e) => e.type === type);

/** Each child's `dispatch.intend` request ids, each at most once. */
function dispatchedOnce(read: (id: string) => Read | undefined, children: string[]): Record<string, string[]> {
  return Object.fromEntries(
    children.map((id) => [
      id,
      ofType(read(id)?.events ?? [], 'dispatch.intend').map((e) => String(e.data['clientRequestId'])),
    ]),
  );
}
const unique = (ids: Record<string, string[]>) =>
  Object.values(ids).every((list) => list.length > 0 && new Set(list).size === list.length);

/** Reads every driven Task back from the durable state (read-only store, the Runtime's job records, the workspaces) and checks it. */
export async function readBack(state: string, tasks: DrivenTasks): Promise<BranchJoinExpectation[]> {
  const store = EventStore.open({ root: state, kinds: OBJECT_KINDS, readOnly: true });
  const runtime = await createRuntime({ root: join(state, 'runtime'), recover: false, confinement: demoConfinement() });
  try {
    const read = reader(store);
    const out: BranchJoinExpectation[] = [];
    for (const [part, taskId] of Object.entries(tasks) as Array<[BranchJoinPart, string]>) {
      const expect = expecter(part, out);
      const parent = read(taskId);
      if (!parent) expect(`task ${taskId} exists`, null, false);
      else if (part === 'best-of-three') await checkBestOfThree({ state, read, runtime, taskId, parent, expect });
      else checkFanOut({ state, read, taskId, parent, expect });
    }
    return out;
  } finally {
    await runtime.close();
    await store.close();
  }
}

type Expect = (what: string, observed: unknown, held: boolean) => void;

function expecter(part: BranchJoinPart, out: BranchJoinExpectation[]): Expect {
  return (what, observed, held) => out.push({ part, what, held, observed: JSON.stringify(observed) ?? 'undefined' });
}

/** What a part's checks read: the state root, any Task, the Runtime's jobs, the parent and where its expectations go. */
interface Checked {
  state: string;
  read: (id: string) => Read | undefined;
  runtime?: Runtime;
  taskId: string;
  parent: Read;
  expect: Expect;
}

async function checkBestOfThree({ state, read, runtime, taskId, parent, expect }: Checked): Promise<void> {
  const events = parent.events;
  const opens = ofType(events, 'branch.open');
  const open = opens[0];
  const children = (open?.data['children'] ?? []) as Array<{ taskId: string; harness: string }>;
  expect(
    'the fix stage opened one branch: three parallel Attempts (wrong, right, hang), first_verified',
    opens.map((e) => [e.data['kind'], e.data['join'], children.map((c) => c.harness)]),
    opens.length === 1 &&
      open!.data['kind'] === 'parallel' &&
      open!.data['join'] === 'first_verified' &&
      JSON.stringify(children.map((c) => c.harness)) === JSON.stringify(ATTEMPTS),
  );
  const [wrong, right, hang] = ATTEMPTS.map((h) => children.find((c) => c.harness === h)?.taskId ?? `?${h}`);
  const observed = ofType(events, 'branch.observe');
  const observe = (child: string) => observed.filter((e) => e.data['child'] === child);
  const joins = ofType(events, 'branch.join');
  const join0 = joins[0];

  const wrongObs = observe(wrong!);
  const wrongTask = read(wrong!);
  expect(
    "the wrong Attempt ended waiting, its verification refused (branch.observe verified false, detail verification_failed…; the child's last rejection)",
    wrongObs.map((e) => [
      e.data['state'],
      e.data['verified'],
      String(e.data['detail']).slice(0, 40),
      wrongTask?.context.lastRejection?.reason,
    ]),
    wrongObs.length === 1 &&
      wrongObs[0]!.data['state'] === 'waiting' &&
      wrongObs[0]!.data['verified'] === false &&
      wrongObs[0]!.disposition.admitted &&
      /^verification_failed/.test(String(wrongObs[0]!.data['detail'])) &&
      wrongTask?.context.lastRejection?.reason === 'verification_failed',
  );
  const rightObs = observe(right!);
  const rightTask = read(right!);
  expect(
    'the right Attempt completed, verified; its outcome digest is bound in the parent (branch.observe)',
    rightObs.map((e) => [
      e.data['state'],
      e.data['verified'],
      e.data['outcomeDigest'] === rightTask?.context.outcome?.digest,
    ]),
    rightObs.length === 1 &&
      rightTask?.state === 'completed' &&
      rightObs[0]!.data['verified'] === true &&
      rightObs[0]!.disposition.admitted &&
      rightObs[0]!.data['outcomeDigest'] === rightTask.context.outcome?.digest,
  );
  expect(
    'the join committed exactly once, the right Attempt the winner by verification ("verified first")',
    joins.map((e) => [e.data['winners'], e.data['reason'], e.disposition.admitted]),
    joins.length === 1 &&
      join0!.disposition.admitted &&
      JSON.stringify(join0!.data['winners']) === JSON.stringify([right]) &&
      /verified first/.test(String(join0!.data['reason'])),
  );
  const hangTask = read(hang!);
  const [hangJob] = await runtime!.findJobs({ clientRequestId: clientRequestId(hang!, 1, 1, 'run') });
  expect(
    "the hang Attempt was cancelled when the right one won, and its run with it (the Runtime's job)",
    [hangTask?.state, hangJob?.state],
    hangTask?.state === 'cancelled' && hangJob?.state === 'cancelled',
  );
  const hangObs = observe(hang!);
  expect(
    "the hang Attempt's late end is retained in the parent after the join, refused superseded",
    hangObs.map((e) => [e.data['state'], e.disposition, join0 ? e.revision > join0.revision : null]),
    hangObs.length === 1 &&
      hangObs[0]!.data['state'] === 'cancelled' &&
      hangObs[0]!.disposition.admitted === false &&
      hangObs[0]!.disposition.code === 'superseded' &&
      join0 !== undefined &&
      hangObs[0]!.revision > join0.revision,
  );
  const dispatched = dispatchedOnce(read, [wrong!, right!, hang!]);
  expect(
    "each Attempt dispatched its run once, every request id unique (the children's dispatch.intend)",
    Object.values(dispatched).map((l) => l.length),
    unique(dispatched) && Object.values(dispatched).every((l) => l.length === 1),
  );
  const fixes = durationFixes(loadWorkload('duration-v1'));
  const workspace = workspacePath(join(state, 'workspaces'), taskId, parent.context.attempt);
  const file = join(workspace, 'src', 'duration.js');
  const merged = existsSync(file) ? readFileSync(file, 'utf8') : null;
  expect(
    "the right Attempt's fix was merged into the parent's workspace, and its artifacts are the parent's evidence",
    [join0?.data['merged'], merged === fixes.right, Object.keys(parent.context.evidence).sort()],
    merged === fixes.right &&
      ((join0?.data['merged'] ?? []) as string[]).includes('src/duration.js') &&
      ['fix.patch', 'notes.md'].every((a) => a in parent.context.evidence),
  );
  expect(
    'the parent completed, its acceptance (the frozen tests) passed in its own workspace',
    [parent.state, parent.context.verification?.passed, parent.context.outcome !== null],
    parent.state === 'completed' && parent.context.verification?.passed === true && parent.context.outcome !== null,
  );
}

function checkFanOut({ state, read, taskId, parent, expect }: Checked): void {
  const events = parent.events;
  const opens = ofType(events, 'branch.open');
  const joins = ofType(events, 'branch.join');
  const observed = ofType(events, 'branch.observe');
  const childrenOf = (e: Event | undefined) => (e?.data['children'] ?? []) as Array<{ taskId: string; item?: string }>;
  const [fixOpen, reviewOpen] = opens;
  const fixers = childrenOf(fixOpen);
  expect(
    'the fix stage fanned out one child per defect listed in defects.json',
    fixers.map((c) => c.item),
    JSON.stringify(fixers.map((c) => c.item)) === JSON.stringify(DEFECTS) && fixOpen?.data['kind'] === 'fanOut',
  );
  const ends = fixers.map((c) => {
    const child = read(c.taskId);
    return {
      child: c.taskId,
      item: c.item,
      state: child?.state,
      own:
        child?.spec.goal.includes(`DEFECT=${c.item}`) === true &&
        `fixes/${c.item}.md` in (child?.context.evidence ?? {}),
      digest: child?.context.outcome?.digest ?? null,
      bound: observed
        .filter((e) => e.data['child'] === c.taskId)
        .map((e) => [e.data['outcomeDigest'], e.disposition.admitted]),
    };
  });
  expect(
    'each defect child completed with its own outcome (its goal, its fixes/<defect>.md, its own test)',
    ends.map((e) => [e.child, e.state, e.own]),
    ends.length === DEFECTS.length &&
      ends.every((e) => e.state === 'completed' && e.own && e.digest !== null) &&
      new Set(ends.map((e) => e.digest)).size === ends.length,
  );
  expect(
    "every child's outcome digest is bound in the parent's branch.observe",
    ends.map((e) => [e.child, e.bound.length, e.bound[0]?.[0] === e.digest]),
    ends.every((e) => e.bound.length === 1 && e.bound[0]![0] === e.digest && e.bound[0]![1] === true),
  );
  const joinsOf = (e: Event | undefined) => joins.filter((j) => j.data['branchId'] === e?.data['branchId']);
  const fixJoins = joinsOf(fixOpen);
  const mergedPaths = (fixJoins[0]?.data['merged'] ?? []) as string[];
  const fixes = defectFixes();
  expect(
    "the fix join committed once, every child a winner, and the merged paths hold every child's fix",
    [fixJoins.length, fixJoins[0]?.data['winners'], mergedPaths],
    fixJoins.length === 1 &&
      fixJoins[0]!.disposition.admitted &&
      // Under `all` the winners are listed in the order they ended.
      JSON.stringify([...((fixJoins[0]!.data['winners'] ?? []) as string[])].sort()) ===
        JSON.stringify(fixers.map((c) => c.taskId).sort()) &&
      DEFECTS.every((d) => mergedPaths.includes(fixes[d].file) && mergedPaths.includes(`fixes/${d}.md`)),
  );
  const reviewers = childrenOf(reviewOpen);
  const reviewer = reviewers[0] ? read(reviewers[0].taskId) : undefined;
  const reviewJoins = joinsOf(reviewOpen);
  const workspace = workspacePath(join(state, 'workspaces'), taskId, parent.context.attempt);
  const reviewFile = join(workspace, 'review.md');
  const review = existsSync(reviewFile) ? readFileSync(reviewFile, 'utf8') : '';
  expect(
    'one reviewer child, of another spec, reviewed the joined change and completed; the review join committed once',
    [reviewers.map((c) => c.item), reviewer?.state, reviewer?.spec.labels['role'], reviewJoins.length],
    reviewers.length === 1 &&
      reviewers[0]!.item === REVIEW_ITEM &&
      reviewer?.state === 'completed' &&
      reviewer.spec.labels['role'] === 'reviewer' &&
      observed.some(
        (e) => e.data['child'] === reviewers[0]!.taskId && e.data['outcomeDigest'] === reviewer.context.outcome?.digest,
      ) &&
      reviewJoins.length === 1 &&
      reviewJoins[0]!.disposition.admitted,
  );
  expect(
    "its review.md (verdict approve, every fix seen) is in the parent's workspace and the parent's evidence",
    review.split('\n').slice(2, 5),
    /^verdict: approve$/m.test(review) &&
      DEFECTS.every((d) => review.includes(`fixes/${d}.md`)) &&
      'review.md' in parent.context.evidence,
  );
  expect(
    'two branches, each joined exactly once',
    [opens.length, joins.length],
    opens.length === 2 && joins.length === 2 && fixJoins.length === 1 && reviewJoins.length === 1,
  );
  const dispatched = dispatchedOnce(
    read,
    [...fixers, ...reviewers].map((c) => c.taskId),
  );
  expect(
    "each child dispatched its run once, every request id unique (the children's dispatch.intend)",
    Object.values(dispatched).map((l) => l.length),
    unique(dispatched) && Object.values(dispatched).every((l) => l.length === 1),
  );
  expect(
    "the parent completed, its acceptance (every defect's test) passed in its own workspace",
    [parent.state, parent.context.verification?.passed],
    parent.state === 'completed' && parent.context.verification?.passed === true,
  );
}
