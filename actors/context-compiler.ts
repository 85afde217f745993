import type { TaskContext } from '../machines/index.js';
import { digestOf, type EventStore } from '../store/index.js';
import type { TaskSpec } from '../objects/index.js';

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

/**
 * Compiles the Context a provider is given for the current Assignment: every source with its
 * identity, digest, trust class and the reason it was selected. It is committed (an object
 * referenced by `context.compile`) before the provider runs, so a result can later be matched
 * against exactly what the provider saw. Evidence enters as the bytes the Host retained, never
 * as what an earlier provider said about them.
 */
export function compileContext(
  store: EventStore,
  spec: TaskSpec,
  context: TaskContext,
  workspaceDigest: string,
): CompiledContext {
  const assignment = context.assignment!;
  const assignmentBody = store.getObject<{ instructions: string }>(assignment.digest, 'assignment').body;
  const sources: CompiledContext['body']['sources'] = [
    { id: 'task-spec', digest: context.specDigest!, trust: 'host', reason: 'the goal and the required artifacts' },
    {
      id: `assignment:g${assignment.generation}`,
      digest: assignment.digest,
      trust: 'host',
      reason: `${assignment.purpose} by ${assignment.harness}`,
    },
    { id: 'workspace', digest: workspaceDigest, trust: 'workspace', reason: 'source tree the provider works on' },
  ];
  const evidenceText: string[] = [];
  for (const name of Object.keys(context.evidence).sort()) {
    const held = context.evidence[name]!;
    sources.push({
      id: `evidence:${name}`,
      digest: held.digest,
      trust: 'evidence',
      reason: `validated ${name} from generation ${held.generation}`,
    });
    evidenceText.push(
      `--- ${name} (validated by the Host, generation ${held.generation}, ${held.digest})\n${store.getBlob(held.digest).toString('utf8')}`,
    );
  }
  const required = spec.requiredArtifacts.map((a) => `- ${a.name} (schema: ${a.schema})`).join('\n');
  const purposeLine =
    assignment.purpose === 'diagnose'
      ? 'Diagnose the defect. Read the code and run the tests. Write diagnosis.json. Do not change the source.'
      : 'Repair the defect using the diagnosis below. Edit the source, run the tests, then write completion.json.';
  const prompt = [
    `# Task ${context.taskId} — ${spec.title}`,
    `Purpose: ${assignment.purpose} (Assignment generation ${assignment.generation})`,
    '',
    spec.goal,
    '',
    purposeLine,
    '',
    'Artifacts the Host requires (written as files in the workspace):',
    required,
    ...(spec.acceptance
      ? [
          '',
          `Acceptance: \`${[spec.acceptance.command, ...spec.acceptance.args].join(' ')}\`; the frozen tests must not be modified.`,
        ]
      : []),
    ...(assignmentBody.instructions ? ['', assignmentBody.instructions] : []),
    ...(evidenceText.length ? ['', 'Evidence retained by the Host:', ...evidenceText] : []),
  ].join('\n');
  const body = { taskId: context.taskId, generation: assignment.generation, sources, prompt };
  return { body, digest: digestOf({ kind: 'context', body }) };
}
