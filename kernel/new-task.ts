import { randomUUID } from 'node:crypto';
import { zodIssue } from '../base/index.js';
import type { EventStore } from '../store/index.js';
import { HostError, isHostErrorCode } from './errors.js';
import { pinFrozenTests } from './frozen-tests.js';
import {
  SPEC_MAX_BYTES,
  TaskSpecStrict,
  type TaskSpec,
  checkSpecContracts,
  checkSpecTemplates,
  type ArtifactContracts,
  type TaskSpecInput,
  stagesOf,
  fillItem,
} from '../objects/index.js';
import type { Attachments, SendResult } from './task-actor.js';

/** A Task about to be created: its id, its checked spec, and the `task.created` event that carries it. */
export interface NewTask {
  taskId: string;
  spec: TaskSpec;
  created: Record<string, unknown>;
  /** The spec object, written in the same commit as `created`. */
  attachments: Attachments;
}

/**
 * Parses a Task spec from outside (a JSON file, a request body) and compiles its artifact
 * contracts and stage templates: `invalid_spec` with the field path as `path` and in the message
 * (`task spec requiredArtifacts.0.schema: …`, `task spec stages.0.proposeCompletion: unknown key
 * "proposeCompletion" (did you mean "proposesCompletion"?)`); a spec over `SPEC_MAX_BYTES` of JSON
 * at `(root)`.
 */
export function parseTaskSpec(input: unknown, contracts: ArtifactContracts = {}): TaskSpec {
  const parsed = specOf(input, contracts);
  if ('issue' in parsed) {
    const { path, message } = parsed.issue;
    throw new HostError('invalid_spec', `task spec ${path}: ${message}`, { path });
  }
  return parsed.spec;
}

/** The spec, or its first issue (the field path and what is wrong there). */
function specOf(
  input: unknown,
  contracts: ArtifactContracts,
): { spec: TaskSpec } | { issue: { path: string; message: string } } {
  const size = specBytes(input);
  if (size > SPEC_MAX_BYTES)
    return {
      issue: { path: '(root)', message: `${size} bytes of JSON; a spec may hold at most ${SPEC_MAX_BYTES} (1 MiB)` },
    };
  const parsed = TaskSpecStrict.safeParse(input);
  if (!parsed.success) {
    const { path, message } = zodIssue('invalid_spec', parsed.error);
    return { issue: { path, message } };
  }
  const issue =
    checkSpecContracts(parsed.data, contracts) ??
    checkSpecTemplates(parsed.data) ??
    fanOutIssue(parsed.data, contracts);
  return issue ? { issue } : { spec: parsed.data };
}

/**
 * A fan-out's child spec is checked as any spec when its parent is created (with `item` as the
 * item), so a bad template is refused before anything runs, at its path
 * (`stages.1.fanOut.spec.goal`). It has at most one stage: the Host assigns a child only that.
 */
function fanOutIssue(spec: TaskSpec, contracts: ArtifactContracts): { path: string; message: string } | undefined {
  for (const [i, stage] of stagesOf(spec).entries()) {
    if (!stage.fanOut) continue;
    const at = `stages.${i}.fanOut.spec`;
    // As a child is made: `{{item}}` is the item (here a stand-in), in instructions too.
    const child = specOf(fillItem(stage.fanOut.spec, 'item'), contracts);
    if ('issue' in child)
      return { path: child.issue.path === '(root)' ? at : `${at}.${child.issue.path}`, message: child.issue.message };
    if ((child.spec.stages?.length ?? 1) > 1)
      return { path: `${at}.stages`, message: "a fan-out's child spec has one stage" };
  }
  return undefined;
}

/**
 * `Supervisor.createTask`'s first half: parses the spec (`parseTaskSpec`), pins
 * its frozen acceptance tests' digests from the workspace seed (`pinFrozenTests`), picks the Task
 * id (the spec's, else a random one) and names the spec object by its digest. Writes nothing.
 */
export function newTask(input: TaskSpecInput, store: EventStore, contracts: ArtifactContracts = {}): NewTask {
  const spec = pinFrozenTests(parseTaskSpec(input, contracts));
  const taskId = spec.taskId ?? `task-${randomUUID()}`;
  const specDigest = store.prepareObject({ kind: 'task-spec', body: spec }).digest;
  const requiredArtifacts = spec.requiredArtifacts.map((a) => a.name);
  return {
    taskId,
    spec,
    created: { type: 'task.created', taskId, attempt: 1, specDigest, requiredArtifacts },
    attachments: { objects: [{ kind: 'task-spec', body: spec }] },
  };
}

/**
 * The field paths (`stages.1.instructions`) at which a spec given to resume a Task differs from
 * the one it was created with. The id is left out (a spec without `taskId` is resumed by
 * `--task`), and so are the frozen tests' pinned digests (pinned again from the seed on each read
 * of the spec file; the Host checks the files themselves when it verifies).
 */
export function specDifferences(stored: TaskSpec, given: TaskSpec): string[] {
  const comparable = (s: TaskSpec): unknown => {
    const { taskId: _id, ...rest } = s;
    return JSON.parse(
      JSON.stringify(
        rest.acceptance ? { ...rest, acceptance: { ...rest.acceptance, frozenTestDigests: undefined } } : rest,
      ),
    );
  };
  const out: string[] = [];
  walkDifferences(comparable(stored), comparable(given), [], out);
  return out;
}

function walkDifferences(a: unknown, b: unknown, path: string[], out: string[]): void {
  const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
  if (isRecord(a) && isRecord(b) && Array.isArray(a) === Array.isArray(b)) {
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)]))
      walkDifferences(a[key], b[key], [...path, key], out);
    return;
  }
  if (JSON.stringify(a) !== JSON.stringify(b)) out.push(path.length ? path.join('.') : '(the whole spec)');
}

/** The size of `input` as UTF-8 JSON (0 for what JSON cannot hold: the schema refuses it). */
function specBytes(input: unknown): number {
  let text: string | undefined;
  try {
    text = JSON.stringify(input);
  } catch {
    return 0;
  }
  return text === undefined ? 0 : Buffer.byteLength(text, 'utf8');
}

/** The error `createTask` throws for a `task.created` the Task refused (nothing written). */
export function notCreated(result: SendResult): HostError {
  // A refused `task.created` carries a refusal or a store code, all the Host's (another would be a defect).
  const code = result.code === 'revision_conflict' ? 'task_exists' : result.code;
  return new HostError(
    code !== undefined && isHostErrorCode(code) ? code : 'boot_failed',
    result.detail ?? 'task not created',
  );
}
