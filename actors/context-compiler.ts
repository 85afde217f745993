import type { TaskContext } from '../machines/index.js';
import { digestOf, type EventStore } from '../store/index.js';
import {
  TEMPLATE_PLACEHOLDER,
  contractLabel,
  type RequiredArtifact,
  type Stage,
  type TaskSpec,
} from '../objects/index.js';

export interface CompiledContext {
  body: {
    taskId: string;
    generation: number;
    sources: Array<{
      id: string;
      digest: string;
      trust: 'host' | 'evidence' | 'workspace' | 'provider';
      reason: string;
    }>;
    prompt: string;
  };
  digest: string;
}

/** What a provider is told an artifact must be: its contract in words (and a JSON Schema as written). */
function describeArtifact(artifact: RequiredArtifact): string {
  const limit = artifact.maxBytes !== undefined ? `, at most ${artifact.maxBytes} bytes` : '';
  const about = artifact.description ? ` — ${artifact.description}` : '';
  if (artifact.kind === 'file') return `- ${artifact.name}: a file (any content${limit})${about}`;
  if (artifact.kind === 'text') {
    const pattern = artifact.pattern !== undefined ? `, matching /${artifact.pattern}/` : '';
    return `- ${artifact.name}: UTF-8 text${limit}${pattern}${about}`;
  }
  if (artifact.schema !== undefined && typeof artifact.schema !== 'string')
    return `- ${artifact.name}: JSON${limit} valid against this JSON Schema${about}:\n${JSON.stringify(artifact.schema, null, 2)}`;
  return `- ${artifact.name}: JSON${limit} (contract: ${contractLabel(artifact)})${about}`;
}

/**
 * Compiles the Context a provider is given for the current Assignment: every source with its
 * identity, digest, trust class and the reason it was selected. It is committed (an object
 * referenced by `context.compile`) before the provider runs, so a result can later be matched
 * against exactly what the provider saw. Evidence enters as the bytes the Host retained, never
 * as what an earlier provider said about them.
 *
 * The prompt is the spec's, not the Host's: the Task's goal, the stage's instructions (a template
 * filled here), the artifacts the stage must write with their contracts, the acceptance command,
 * and the evidence held. A template that places the artifact list or the evidence itself
 * (`{{stage.artifacts}}`, `{{evidence}}`) does not get them appended again.
 */
export function compileContext(
  store: EventStore,
  spec: TaskSpec,
  context: TaskContext,
  stage: Stage,
  workspaceDigest: string,
): CompiledContext {
  const assignment = context.assignment!;
  const assignmentBody = store.getObject<{ instructions: string }>(assignment.digest, 'assignment').body;
  const sources: CompiledContext['body']['sources'] = [
    { id: 'task-spec', digest: context.specDigest!, trust: 'host', reason: 'the goal, stages and artifact contracts' },
    {
      id: `assignment:g${assignment.generation}`,
      digest: assignment.digest,
      trust: 'host',
      reason: `stage ${stage.name} by ${assignment.harness}`,
    },
    { id: 'workspace', digest: workspaceDigest, trust: 'workspace', reason: 'source tree the provider works on' },
  ];
  const evidenceText = new Map<string, string>();
  for (const name of Object.keys(context.evidence).sort()) {
    const held = context.evidence[name]!;
    sources.push({
      id: `evidence:${name}`,
      digest: held.digest,
      trust: 'evidence',
      reason: `validated ${name} from generation ${held.generation}`,
    });
    const artifact = spec.requiredArtifacts.find((a) => a.name === name);
    const bytes = store.getBlob(held.digest);
    const shown = artifact?.kind === 'file' ? `(a file of ${bytes.length} bytes)` : bytes.toString('utf8');
    evidenceText.set(
      name,
      `--- ${name} (validated by the Host, generation ${held.generation}, ${held.digest})\n${shown}`,
    );
  }
  const produces = spec.requiredArtifacts.filter((a) => stage.produces.includes(a.name));
  const artifactList = produces.length
    ? ['Artifacts this stage must write, as files in the workspace:', ...produces.map(describeArtifact)].join('\n')
    : 'This stage writes no artifact.';
  const acceptance = spec.acceptance
    ? `Acceptance: \`${[spec.acceptance.command, ...spec.acceptance.args].join(' ')}\`; the frozen tests must not be modified.`
    : '';
  const allEvidence = evidenceText.size ? ['Evidence retained by the Host:', ...evidenceText.values()].join('\n') : '';
  const values: Record<string, string> = {
    'task.id': context.taskId,
    'task.title': spec.title,
    'task.goal': spec.goal,
    'stage.name': stage.name,
    'stage.purpose': stage.purpose ?? stage.name,
    'stage.artifacts': artifactList,
    'assignment.generation': String(assignment.generation),
    'assignment.harness': assignment.harness,
    acceptance,
    evidence: allEvidence || '(no evidence held yet)',
  };
  const placed = new Set<string>();
  const instructions = stage.instructions.replace(TEMPLATE_PLACEHOLDER, (_whole, name: string) => {
    placed.add(name);
    if (name.startsWith('evidence:')) return evidenceText.get(name.slice('evidence:'.length)) ?? '(not held)';
    return values[name] ?? '';
  });
  const prompt = [
    `# Task ${context.taskId} — ${spec.title}`,
    `Stage: ${stage.name} (${stage.purpose ?? stage.name}), Assignment generation ${assignment.generation}`,
    '',
    spec.goal,
    ...(instructions ? ['', instructions] : []),
    ...(placed.has('stage.artifacts') ? [] : ['', artifactList]),
    ...(acceptance && !placed.has('acceptance') ? ['', acceptance] : []),
    ...(assignmentBody.instructions ? ['', assignmentBody.instructions] : []),
    ...(allEvidence && !placed.has('evidence') ? ['', allEvidence] : []),
  ].join('\n');
  const body = { taskId: context.taskId, generation: assignment.generation, sources, prompt };
  return { body, digest: digestOf({ kind: 'context', body }) };
}
