import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { workspacePath } from '../../runtime/index.js';
import type { SendResult, Supervisor } from '../../kernel/index.js';
import type { Round1Behaviour } from './behaviours.js';
import type { Round1Run } from './harnesses.js';
import type { Workload } from '../../cli/workload.js';

/** The round1 demo's scenarios, in the order they are reported. */
export const ROUND1_SCENARIOS = [
  'maintainer-codex-acp',
  'maintainer-acp-codex',
  'follow-readme',
  'invented',
  'superseded',
] as const;
export type Round1ScenarioName = (typeof ROUND1_SCENARIOS)[number];

/** Harness names the round1 harnesses provide: `codex` (Codex app-server) and `hermes` (an ACP agent). */
type HarnessName = 'codex' | 'hermes';

export interface Round1Plan {
  name: Round1ScenarioName;
  /** What the scenario shows, for the report. */
  title: string;
  surveyor: HarnessName;
  decider: HarnessName;
  /** After a refusal that leaves the Task waiting, the decide stage is reassigned to this harness. */
  reassignTo?: HarnessName;
  /** What each decide run does, by generation (2 is the first decide run). */
  decisions: Record<number, Round1Behaviour>;
  /**
   * The concurrent maintainer, when the first decide Context is compiled: `world` copies the
   * maintainer's SPEC.md and catalog.json over the Task's world; `goal` revises the Goal.
   */
  maintainer?: 'world' | 'goal';
  /** After the rerun's Context is compiled, a script submits a decision naming the Context the Task left. */
  lateDecision?: boolean;
  ends: 'completed' | 'waiting';
}

export const ROUND1_PLANS: Record<Round1ScenarioName, Round1Plan> = {
  'maintainer-codex-acp': {
    name: 'maintainer-codex-acp',
    title: 'the maintainer revises SPEC.md and catalog.json while Codex surveys and the ACP agent decides',
    surveyor: 'codex',
    decider: 'hermes',
    decisions: { 2: 'apply', 3: 'apply' },
    maintainer: 'world',
    ends: 'completed',
  },
  'maintainer-acp-codex': {
    name: 'maintainer-acp-codex',
    title: 'the Goal is revised while the ACP agent surveys and Codex decides',
    surveyor: 'hermes',
    decider: 'codex',
    decisions: { 2: 'apply', 3: 'apply' },
    maintainer: 'goal',
    ends: 'completed',
  },
  'follow-readme': {
    name: 'follow-readme',
    title: "the provider picks the README's action; reassigned, the other provider applies v1",
    surveyor: 'codex',
    decider: 'hermes',
    reassignTo: 'codex',
    decisions: { 2: 'follow-readme', 3: 'apply' },
    ends: 'completed',
  },
  invented: {
    name: 'invented',
    title: 'the provider names a candidate the Context never listed; reassigned, the other provider applies v1',
    surveyor: 'hermes',
    decider: 'codex',
    reassignTo: 'hermes',
    decisions: { 2: 'invented', 3: 'apply' },
    ends: 'completed',
  },
  superseded: {
    name: 'superseded',
    title: 'a decision naming the Context the Task left (stale, then recompiled) arrives late',
    surveyor: 'codex',
    decider: 'codex',
    decisions: { 2: 'apply', 3: 'apply' },
    maintainer: 'world',
    lateDecision: true,
    ends: 'completed',
  },
};

/** The Goal the `goal` maintainer sets: the same work, said more precisely. */
export const REVISED_GOAL =
  'Move the client library in the workspace to record schema version 1 while staying compatible with version 0 and refusing every other version, as the trusted specification (SPEC.md) requires. Survey first (survey.md), then choose one of the candidate actions the Host lists (decision.json); the Host performs it and runs the frozen acceptance tests.';

/** What the scripted model does in a run of a Task bound to `plan`. */
export function round1BehaviourFor(plan: Round1Plan, run: Pick<Round1Run, 'stage' | 'generation'>): Round1Behaviour {
  if (run.stage === 'survey') return 'survey';
  return plan.decisions[run.generation] ?? 'apply';
}

/** What the driving process saw that the store cannot say by itself. */
export interface Round1Facts {
  /** The world copy the Task was created with. */
  world: string;
  /** The answer to the late decision (superseded). */
  lateDecision?: SendResult;
  /** The Context digest the late decision named. */
  lateContext?: string;
  /** sha256 of the workspace's src/client.js when a refusal left the Task waiting (before the reassignment). */
  clientAtRefusal?: string;
}

const Compiled = z.object({ generation: z.number().int(), contextDigest: z.string() });

/** A fresh copy of the workload's world for one Task, under the state root. */
export function copyWorld(workload: Workload, state: string, scenario: string): string {
  const world = join(state, 'worlds', scenario);
  mkdirSync(join(state, 'worlds'), { recursive: true });
  cpSync(join(workload.dir, 'world'), world, { recursive: true });
  return world;
}

/**
 * Drives one Task of `plan` the way a user's script would: create it on its own world copy,
 * survey, decide, and reassign the decide stage once if a refusal left the Task waiting. The
 * maintainer and the late decision react to commits (`subscribe`); `gate` is what the harness
 * factory awaits before it launches a provider, so the maintainer's revision lands before the
 * provider's run, by construction. Resolves when the Task rests.
 */
export async function driveRound1(
  sup: Supervisor,
  workload: Workload,
  plan: Round1Plan,
  world: string,
  workspaces: string,
  bind: (taskId: string, gate: (run: Round1Run) => Promise<void>) => void,
): Promise<{ taskId: string; facts: Round1Facts }> {
  const facts: Round1Facts = { world };
  const { taskId } = await sup.createTask({
    ...workload.spec,
    world,
    labels: { ...workload.spec.labels, scenario: plan.name },
  });
  // What the harness factory awaits: the maintainer's revision or the late decision, once sent.
  let revised: Promise<void> = Promise.resolve();
  const contexts = new Map<number, string>();
  const unsubscribe = sup.subscribe((c) => {
    if (c.taskId !== taskId || c.type !== 'context.compile' || !c.admitted) return;
    const compiled = Compiled.parse(sup.events(taskId).find((e) => e.revision === c.revision)?.data);
    contexts.set(compiled.generation, compiled.contextDigest);
    // The first decide Context (generation 2) is committed: the maintainer acts now, before its run.
    // A listener runs before the Host's next frontier step, so the copy is done before dispatch.
    if (compiled.generation === 2 && plan.maintainer === 'world')
      for (const file of ['SPEC.md', 'catalog.json'])
        copyFileSync(join(workload.dir, 'maintainer', file), join(world, file));
    if (compiled.generation === 2 && plan.maintainer === 'goal')
      revised = sup
        .send(taskId, {
          type: 'goal.revise',
          goal: REVISED_GOAL,
          reason: 'the maintainer made the version rule explicit',
        })
        .then(() => undefined);
    // The rerun's Context (generation 3) is committed: the Task has left the one generation 2 bound.
    const left = contexts.get(2);
    if (compiled.generation === 3 && plan.lateDecision && left) {
      facts.lateContext = left;
      revised = sup
        .send(taskId, {
          type: 'decision.submit',
          contextDigest: left,
          candidateId: 'apply-v1',
          rationale: 'sent late, against the Context generation 2 was compiled in',
          decider: 'late-script',
        })
        .then((r) => void (facts.lateDecision = r));
    }
  });
  bind(taskId, async () => revised);
  try {
    await sup.send(taskId, { type: 'assignment.commit', harness: plan.surveyor, stage: 'survey' });
    await sup.waitFor(taskId, ['waiting']);
    await sup.send(taskId, { type: 'assignment.commit', harness: plan.decider, stage: 'decide' });
    let rest = await sup.waitFor(taskId, ['completed', 'waiting']);
    if (rest === 'waiting' && plan.reassignTo) {
      const task = sup.getTask(taskId);
      const client = join(workspacePath(workspaces, taskId, task?.context.attempt ?? 1), 'src', 'client.js');
      facts.clientAtRefusal = `sha256:${createHash('sha256').update(readFileSync(client)).digest('hex')}`;
      await sup.send(taskId, { type: 'assignment.commit', harness: plan.reassignTo, stage: 'decide' });
      rest = await sup.waitFor(taskId, ['completed', 'waiting']);
    }
    await revised;
  } finally {
    unsubscribe();
  }
  return { taskId, facts };
}
