import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { HostError } from '../../kernel/errors.js';
import { createSupervisor } from '../../kernel/supervisor.js';
import { TaskSpec, checkArtifact, type RequiredArtifact, type TaskSpecInput } from '../../objects/index.js';
import { tempDir } from '../support/temp.js';

const BASE: TaskSpecInput = {
  title: 'Investigate and fix',
  goal: 'Find the defect, fix it, report.',
  requiredArtifacts: [
    {
      name: 'findings.json',
      schema: { type: 'object', required: ['cause'], properties: { cause: { type: 'string' } } },
    },
    { name: 'notes.md', kind: 'text', maxBytes: 64, pattern: '^# ' },
    { name: 'fix.patch', kind: 'file', maxBytes: 32 },
    { name: 'report.json', schema: 'report' },
  ],
  stages: [
    { name: 'investigate', produces: ['findings.json'], instructions: 'Look at {{task.goal}}. {{stage.artifacts}}' },
    { name: 'fix', produces: ['notes.md', 'fix.patch', 'report.json'], proposesCompletion: true },
  ],
  result: 'report.json',
};
const Report = z.object({ status: z.literal('fixed') });

const artifact = (name: string): RequiredArtifact =>
  TaskSpec.parse(BASE).requiredArtifacts.find((a) => a.name === name)!;
const bytes = (text: string) => Buffer.from(text, 'utf8');

describe('artifact contracts', () => {
  it('checks each kind: JSON Schema with the failing field, registered zod, text size and pattern, file size only', () => {
    const findings = artifact('findings.json');
    assert.deepEqual(checkArtifact(findings, bytes('{"cause":"m before ms"}')), {
      ok: true,
      value: { cause: 'm before ms' },
    });
    assert.deepEqual(checkArtifact(findings, bytes('{"cause":3}')), {
      ok: false,
      code: 'artifact_invalid',
      detail: 'cause: must be string',
      path: 'cause',
    });
    const missing = checkArtifact(findings, bytes('{}'));
    assert.equal(missing.ok ? '' : missing.path, 'cause', 'a missing property is named itself');
    assert.match(JSON.stringify(checkArtifact(findings, bytes('{nope'))), /"ok":false.*not JSON/);

    const report = artifact('report.json');
    assert.equal(checkArtifact(report, bytes('{"status":"fixed"}'), { report: Report }).ok, true);
    const wrong = checkArtifact(report, bytes('{"status":"open"}'), { report: Report });
    assert.equal(wrong.ok ? '' : wrong.path, 'status');
    const unknown = checkArtifact(report, bytes('{"status":"fixed"}'));
    assert.equal(unknown.ok ? '' : unknown.code, 'contract_unknown', 'an unregistered name is not a pass');

    const notes = artifact('notes.md');
    assert.deepEqual(checkArtifact(notes, bytes('# Fixed\nok')), { ok: true, value: '# Fixed\nok' });
    assert.match(JSON.stringify(checkArtifact(notes, bytes('Fixed'))), /does not match/);
    assert.match(JSON.stringify(checkArtifact(notes, bytes(`# ${'x'.repeat(80)}`))), /more than 64/);
    assert.match(JSON.stringify(checkArtifact(notes, Buffer.from([0x23, 0x20, 0xff]))), /not UTF-8/);

    const patch = artifact('fix.patch');
    assert.deepEqual(checkArtifact(patch, Buffer.from([0, 1, 2, 0xff])), { ok: true, value: null });
    assert.match(JSON.stringify(checkArtifact(patch, Buffer.alloc(33))), /more than 32/);
  });

  it('refuses a spec whose contracts or stages do not hold with invalid_spec and the field path, writing nothing', async () => {
    const sup = createSupervisor({ state: tempDir(), artifactContracts: { report: Report } });
    await sup.start();
    try {
      const cases: Array<[string, TaskSpecInput, string]> = [
        [
          'a JSON Schema that does not compile',
          {
            ...BASE,
            requiredArtifacts: [{ name: 'a.json', schema: { type: 'objekt' } }],
            stages: undefined,
            result: undefined,
          },
          'requiredArtifacts.0.schema',
        ],
        [
          'a misspelt JSON Schema keyword (ajv strict mode)',
          {
            ...BASE,
            requiredArtifacts: [{ name: 'a.json', schema: { propertys: {} } }],
            stages: undefined,
            result: undefined,
          },
          'requiredArtifacts.0.schema',
        ],
        [
          'a contract name nobody registered',
          { ...BASE, requiredArtifacts: [{ name: 'a.json', schema: 'nobody' }], stages: undefined, result: undefined },
          'requiredArtifacts.0.schema',
        ],
        [
          'a pattern that is no regular expression',
          {
            ...BASE,
            requiredArtifacts: [{ name: 'a.md', kind: 'text', pattern: '(' }],
            stages: undefined,
            result: undefined,
          },
          'requiredArtifacts.0.pattern',
        ],
        [
          'an artifact path escaping the workspace',
          { ...BASE, requiredArtifacts: [{ name: '../escape.json' }], stages: undefined, result: undefined },
          'requiredArtifacts.0.name',
        ],
        [
          'an absolute artifact path',
          { ...BASE, requiredArtifacts: [{ name: '/etc/passwd', kind: 'file' }], stages: undefined, result: undefined },
          'requiredArtifacts.0.name',
        ],
        [
          'a stage producing an undeclared artifact',
          { ...BASE, stages: [{ name: 's', produces: ['other.json'] }] },
          'stages.0.produces.0',
        ],
        ['a result that is no declared artifact', { ...BASE, result: 'other.json' }, 'result'],
        [
          'an unknown template placeholder',
          { ...BASE, stages: [{ name: 's', instructions: 'Do {{task.nonsense}}' }] },
          'stages.0.instructions',
        ],
        [
          'evidence of an undeclared artifact in a template',
          { ...BASE, stages: [{ name: 's', instructions: '{{evidence:other.json}}' }] },
          'stages.0.instructions',
        ],
        ['a stage declared twice', { ...BASE, stages: [{ name: 's' }, { name: 's' }] }, 'stages.1.name'],
      ];
      for (const [what, spec, path] of cases) {
        await assert.rejects(
          sup.createTask(spec),
          (e) => e instanceof HostError && e.code === 'invalid_spec' && e.path === path,
          what,
        );
      }
      assert.deepEqual(sup.listTasks(), [], 'nothing was written');
      const { taskId } = await sup.createTask(BASE);
      assert.equal(sup.getTask(taskId)?.state, 'open', 'the same spec with its contracts registered is taken');
    } finally {
      await sup.stop();
    }
  });

  it('an Assignment names a stage of the spec: stage_unknown otherwise, with nothing written', async () => {
    const sup = createSupervisor({ state: tempDir(), artifactContracts: { report: Report } });
    await sup.start();
    try {
      const { taskId } = await sup.createTask(BASE);
      const refused = await sup.send(taskId, { type: 'assignment.commit', harness: 'codex', stage: 'deploy' });
      assert.deepEqual([refused.written, refused.code, refused.path], [false, 'stage_unknown', 'stage']);
      const unnamed = await sup.send(taskId, { type: 'assignment.commit', harness: 'codex' });
      assert.deepEqual([unnamed.written, unnamed.code], [false, 'stage_unknown']);
      assert.equal(sup.getTask(taskId)?.revision, 1);
      const taken = await sup.send(taskId, { type: 'assignment.commit', harness: 'codex', stage: 'investigate' });
      assert.deepEqual([taken.admitted, taken.state], [true, 'assigned.compiling']);
      const event = sup.events(taskId).at(-1)!;
      assert.deepEqual(
        [(event.data as { stage: string }).stage, (event.data as { purpose: string }).purpose],
        ['investigate', 'investigate'],
      );
    } finally {
      await sup.stop();
    }
  });
});
