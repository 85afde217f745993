import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ordivon, runFixture, type RunFixture } from './run-fixture.js';

const RUN = ['run', '--spec', 'spec.json', '--stages', 'investigate=a,fix=b', '--state', 'state'];

/** The fixture's spec without its `taskId`: the Task gets a random id, printed for resuming. */
function withoutTaskId(f: RunFixture): void {
  const { taskId: _id, ...spec } = JSON.parse(readFileSync(f.spec, 'utf8'));
  writeFileSync(f.spec, JSON.stringify(spec));
}

/** The id `ordivon run` printed in `created task ID (run again with --task ID to resume)`. */
function createdId(stderr: string): string {
  const m = /created task (task-[0-9a-f-]+) \(run again with --task \1 to resume\)/.exec(stderr);
  assert.ok(m, stderr);
  return m[1]!;
}

describe('ordivon run --task with the id it printed, for a spec without taskId', { timeout: 120_000 }, () => {
  it('resumes a completed Task (was task_exists: the stored spec has no taskId)', () => {
    const f = runFixture();
    f.configure('fix');
    withoutTaskId(f);
    const first = ordivon(f.dir, ...RUN, '--json');
    assert.equal(first.status, 0, first.stderr);
    const id = createdId(first.stderr);
    const again = ordivon(f.dir, ...RUN, '--task', id, '--json');
    assert.equal(again.status, 0, again.stderr);
    assert.match(again.stderr, new RegExp(`resuming task ${id} \\(completed, `));
    assert.equal(again.json().outcomeDigest, first.json().outcomeDigest);
  });

  it('resumes a waiting Task and completes it', () => {
    const f = runFixture();
    f.configure('fix-nothing');
    withoutTaskId(f);
    const first = ordivon(f.dir, ...RUN);
    assert.equal(first.status, 1, first.stderr);
    const id = createdId(first.stderr);
    f.configure('fix');
    const again = ordivon(f.dir, ...RUN, '--task', id, '--json');
    assert.equal(again.status, 0, again.stderr);
    assert.match(again.stderr, new RegExp(`resuming task ${id} \\(waiting, `));
    assert.match(again.stderr, /investigate g1 +finished earlier: skipped/);
    assert.equal(again.json().state, 'completed');
  });

  it('still refuses a spec whose content differs, naming each field that differs (exit 2)', () => {
    const f = runFixture();
    f.configure('fix-nothing');
    withoutTaskId(f);
    const id = createdId(ordivon(f.dir, ...RUN).stderr);
    const spec = JSON.parse(readFileSync(f.spec, 'utf8'));
    spec.goal = 'Another goal.';
    spec.stages[1].instructions = 'Fix it differently.';
    writeFileSync(f.spec, JSON.stringify(spec));
    const r = ordivon(f.dir, ...RUN, '--task', id, '--json');
    assert.equal(r.status, 2, r.stderr);
    const error = r.error();
    assert.equal(error.code, 'task_exists');
    assert.deepEqual(error.differs, ['goal', 'stages.1.instructions']);
    assert.match(error.message, /differs at goal, stages\.1\.instructions/);
  });
});
