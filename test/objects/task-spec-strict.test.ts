import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseTaskSpec } from '../../kernel/new-task.js';
import { HostError } from '../../kernel/errors.js';
import { EventInput } from '../../kernel/event-input.js';
import { SPEC_MAX_BYTES, TaskSpec, TaskSpecStrict } from '../../objects/index.js';

const BASE = { title: 't', goal: 'g', requiredArtifacts: [{ name: 'a.json' }] };

function refusal(input: unknown): { code: string; path: string | undefined; message: string } {
  try {
    parseTaskSpec(input);
  } catch (error) {
    assert.ok(error instanceof HostError);
    return { code: error.code, path: error.path, message: error.message };
  }
  assert.fail('the spec was accepted');
}

describe('a Task spec from outside is strict', () => {
  it('refuses a mistyped stage field at its path, naming the field it meant', () => {
    const r = refusal({ ...BASE, stages: [{ name: 'work', produces: ['a.json'], proposeCompletion: true }] });
    assert.deepEqual(r, {
      code: 'invalid_spec',
      path: 'stages.0.proposeCompletion',
      message:
        'task spec stages.0.proposeCompletion: unknown key "proposeCompletion" (did you mean "proposesCompletion"?)',
    });
  });

  it('refuses unknown keys at every level: acceptance, artifacts, sources, candidates, the spec itself', () => {
    assert.equal(
      refusal({ ...BASE, acceptance: { command: 'true', frozenTest: ['t.js'] } }).path,
      'acceptance.frozenTest',
    );
    assert.equal(
      refusal({ ...BASE, requiredArtifacts: [{ name: 'a.json', knd: 'text' }] }).path,
      'requiredArtifacts.0.knd',
    );
    assert.equal(refusal({ ...BASE, sources: [{ id: 'doc', path: 'd.md', trusted: true }] }).path, 'sources.0.trusted');
    assert.equal(
      refusal({ ...BASE, lables: {} }).message,
      'task spec lables: unknown key "lables" (did you mean "labels"?)',
    );
    const decision = {
      ...BASE,
      requiredArtifacts: [{ name: 'd.json', schema: 'decision' }],
      stages: [
        {
          name: 'decide',
          produces: ['d.json'],
          decision: {
            artifact: 'd.json',
            candidates: [{ id: 'a', summary: 's', action: { kind: 'command', command: 'x', timeout: 1 } }],
          },
        },
      ],
    };
    assert.equal(refusal(decision).path, 'stages.0.decision.candidates.0.action.timeout');
  });

  it('refuses a spec over the size limit before parsing it, naming the limit', () => {
    const r = refusal({ ...BASE, goal: 'x'.repeat(SPEC_MAX_BYTES) });
    assert.equal(r.code, 'invalid_spec');
    assert.equal(r.path, '(root)');
    assert.match(r.message, /at most 1048576 \(1 MiB\)/);
  });

  it('reads a stored spec with a key an older Host wrote (unknown keys dropped)', () => {
    const stored = { ...BASE, retired: true, stages: [{ name: 'work', produces: ['a.json'], legacy: 1 }] };
    const read = TaskSpec.parse(stored);
    assert.equal('retired' in read, false);
    assert.equal(read.stages![0]!.name, 'work');
    assert.equal(TaskSpecStrict.safeParse(stored).success, false);
  });

  it('an external event refuses an unknown key, naming the nearest field', () => {
    const parsed = EventInput.safeParse({ type: 'task.cancel', reason: 'x', reasn: 'y' });
    assert.equal(parsed.success, false);
    assert.deepEqual(parsed.error!.issues[0]!.message, 'unknown key "reasn" (did you mean "reason"?)');
  });
});
