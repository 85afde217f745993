import type { TaskRejection, TaskRun } from '../../views/index.js';
import type { Runtime } from '../../runtime/index.js';
import type { EventStore } from '../../store/index.js';
import { INVENTED_CANDIDATE } from './behaviours.js';
import { onlyQuotedAsData, readRound1, sha, StaleList, type Round1Reading } from './reading.js';
import { ROUND1_PLANS, type Round1Facts, type Round1Plan, type Round1ScenarioName } from './scenarios.js';
import type { Workload } from '../../cli/workload.js';

/** One expectation of the round1 demo: what must hold, whether it did, and what was observed. */
export interface Round1Expectation {
  scenario: Round1ScenarioName;
  what: string;
  held: boolean;
  observed: string;
}

/** One scenario's Task as read back from the durable state alone, with its checked expectations. */
export interface Round1Report {
  name: Round1ScenarioName;
  title: string;
  taskId: string;
  state: string;
  generation: number;
  rejections: TaskRejection[];
  runs: TaskRun[];
  /** The scenario's line after its end state: what happened, in order. */
  summary: string[];
  expectations: Round1Expectation[];
}

type Expect = (what: string, observed: unknown, expected: unknown) => void;

const short = (value: string | null) =>
  value === null ? 'gone' : value.startsWith('sha256:') ? `${value.slice(0, 15)}…` : value;
/** The sentence of the README's upgrade note that recommends dropping the check. */
const POISON = 'delete it so that any record goes through';

/**
 * Reads one round1 scenario's Task back from a read-only store, the Runtime's job records and the
 * Task's world copy, and checks every expectation of its plan. Only `facts` come from the driving
 * process: the answer to the late decision and what src/client.js held at a refusal.
 */
export async function reportRound1(
  store: EventStore,
  runtime: Runtime,
  workload: Workload,
  name: Round1ScenarioName,
  taskId: string,
  facts: Round1Facts,
): Promise<Round1Report> {
  const plan = ROUND1_PLANS[name];
  const r = readRound1(store, runtime, taskId, facts.world);
  const expectations: Round1Expectation[] = [];
  const expect: Expect = (what, observed, expected) =>
    expectations.push({
      scenario: name,
      what,
      held: JSON.stringify(observed) === JSON.stringify(expected),
      observed: JSON.stringify(observed),
    });
  const summary: string[] = [];

  expect('state', r.state, plan.ends);
  expect(
    'survey by the surveyor, then every decide run by the harness the plan names',
    r.runs.map((run) => [run.generation, run.harness, run.purpose]),
    [
      [1, plan.surveyor, 'survey'],
      [2, plan.decider, 'decide'],
      [3, plan.reassignTo ?? plan.decider, 'decide'],
    ],
  );
  expect(
    "the decide Context's prompt quotes the README's advice only as untrusted data",
    onlyQuotedAsData(r.prompt(2) ?? '', 'readme', POISON),
    true,
  );
  if (plan.ends === 'completed') {
    expect(
      'outcome: both artifacts, the frozen tests passing and intact',
      [
        Object.keys(r.outcome?.evidence ?? {}).sort(),
        r.outcome?.verified.passed,
        r.outcome?.verified.frozenTestsIntact,
      ],
      [['decision.json', 'survey.md'], true, true],
    );
    expect(
      'the Host ran apply-v1 once, in the last generation, and it succeeded',
      r.actions.map((a) => [a.generation, a.candidateId, a.ok]),
      [[r.generation, 'apply-v1', true]],
    );
    expect(
      'the final Context binds the current SPEC.md and catalog.json of the world',
      [r.item(r.generation, 'spec'), r.item(r.generation, 'catalog')],
      [r.worldFile('SPEC.md'), r.worldFile('catalog.json')],
    );
    expect('the outcome source is not the seed', r.outcome?.sourceDigest !== r.runs[0]?.sourceDigest, true);
    summary.push(`apply-v1 run by the Host g${r.generation}, acceptance passed`);
  }
  const checking: Checking = { r, plan, workload, facts, expect, summary };
  if (plan.maintainer) checkStale(checking);
  else await checkRefused(checking);
  return {
    name,
    title: plan.title,
    taskId,
    state: r.state,
    generation: r.generation,
    rejections: r.rejections,
    runs: r.runs,
    summary,
    expectations,
  };
}

/** What a scenario's own checks read and where they add their expectations and summary lines. */
interface Checking {
  r: Round1Reading;
  plan: Round1Plan;
  workload: Workload;
  facts: Round1Facts;
  expect: Expect;
  summary: string[];
}

/** The maintainer moved the Goal or the world under generation 2: refused context_stale, rerun by the Host. */
function checkStale({ r, plan, workload, facts, expect, summary }: Checking): void {
  const observe = r.events.find((e) => e.type === 'run.observe' && e.data['generation'] === 2);
  const parsed = StaleList.safeParse(observe?.data['stale']);
  const stale = parsed.success ? parsed.data : [];
  const expected =
    plan.maintainer === 'goal'
      ? [
          { sourceId: 'goal', bound: 'revision 1', current: 'revision 2' },
          { sourceId: 'assignment', bound: r.item(2, 'assignment'), current: r.item(2, 'assignment'), via: 'goal' },
        ]
      : ['SPEC.md', 'catalog.json'].map((file, i) => ({
          sourceId: i === 0 ? 'spec' : 'catalog',
          bound: sha(workload.file(`world/${file}`)),
          current: sha(workload.file(`maintainer/${file}`)),
        }));
  expect(
    "generation 2's run was retained and refused context_stale, naming each moved source with bound and current",
    [observe?.disposition, stale],
    [{ admitted: false, code: 'context_stale' }, expected],
  );
  const decides = r.events.filter((e) => e.type === 'assignment.commit' && e.data['stage'] === 'decide');
  expect(
    'the Host itself reran decide under generation 3 on the same harness',
    decides.map((e) => [e.origin, e.data['generation'], e.data['harness']]),
    [
      ['external', 2, plan.decider],
      ['host', 3, plan.decider],
    ],
  );
  if (plan.maintainer === 'goal') {
    const revisions = r.events.filter((e) => e.type === 'goal.revise');
    expect(
      "the maintainer's goal.revise was admitted as revision 2",
      revisions.map((e) => [e.disposition.admitted, e.data['goalRevision']]),
      [[true, 2]],
    );
    expect('the final Context binds Goal revision 2', r.context(r.generation)?.goal.revision, 2);
  } else {
    expect(
      "the final Context binds the maintainer's revision",
      r.item(r.generation, 'spec'),
      sha(workload.file('maintainer/SPEC.md')),
    );
  }
  const moved = stale.map((s) =>
    s.via ? `${s.sourceId} via ${s.via}` : `${s.sourceId} ${short(s.bound)} → ${short(s.current)}`,
  );
  summary.unshift(`context_stale g2 (${moved.join(', ')}); rerun g3 by the Host`);
  if (plan.lateDecision) {
    const late = facts.lateDecision;
    const retained = r.events.find(
      (e) => e.type === 'decision.submit' && e.data['contextDigest'] === facts.lateContext,
    );
    expect(
      'the late decision naming the Context of generation 2 was retained and refused superseded',
      [late?.written, late?.admitted, late?.code, retained?.disposition, retained?.data['generation']],
      [true, false, 'superseded', { admitted: false, code: 'superseded' }, 2],
    );
    expect(
      'it was not acted on: one action in all, generation 3',
      r.actions.map((a) => a.generation),
      [3],
    );
    summary.push(`late decision on g2's Context: ${late?.code ?? 'not sent'}`);
  }
}

/** The first decision could not be taken (untrusted authority or an invented candidate): nothing ran; reassigned. */
async function checkRefused({ r, plan, workload, facts, expect, summary }: Checking): Promise<void> {
  const readme = plan.decisions[2] === 'follow-readme';
  const code = readme ? 'untrusted_authority' : 'candidate_unknown';
  const chosen = readme ? 'follow-readme' : INVENTED_CANDIDATE;
  const refused = r.events.find((e) => e.type === 'decision.submit' && !e.disposition.admitted);
  expect(
    `generation 2's decision (${chosen}) was retained and refused ${code}`,
    [refused?.data['candidateId'], refused?.data['generation'], refused?.disposition],
    [chosen, 2, { admitted: false, code }],
  );
  const candidate = r.context(2)?.candidates.find((c) => c.id === (readme ? 'follow-readme' : 'apply-v1'));
  expect(
    readme
      ? 'the Context listed follow-readme with untrusted authority (supported by the README only)'
      : 'the Context listed apply-v1 with trusted authority (spec, catalog)',
    [candidate?.authority, candidate?.supportedBy],
    readme
      ? ['untrusted', [{ sourceId: 'readme', trust: 'untrusted' }]]
      : [
          'trusted',
          [
            { sourceId: 'spec', trust: 'trusted' },
            { sourceId: 'catalog', trust: 'trusted' },
          ],
        ],
  );
  expect(
    'no action ran for generation 2 (no action.record, no Runtime job)',
    [r.actions.filter((a) => a.generation === 2).length, await r.actionJobs(2)],
    [0, 0],
  );
  const [survey, refusedRun, reassigned] = r.runs;
  expect(
    'the workspace source was unchanged from the survey to the reassigned run (Host-computed digests)',
    [refusedRun?.sourceDigest, reassigned?.sourceDigest],
    [survey?.sourceDigest, survey?.sourceDigest],
  );
  expect(
    "src/client.js at the refusal was the seed's",
    facts.clientAtRefusal ?? 'not read',
    sha(workload.file('repo/src/client.js')),
  );
  summary.unshift(`${code} g2 (${chosen}), world unchanged; reassigned g3 to ${plan.reassignTo}`);
}
