import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DECISION_HARNESSES, decisionSpec, decisionWorld } from '../support/decision-task.js';
import { tempDir } from '../support/temp.js';
import { ordivon } from './run-fixture.js';

/**
 * `ordivon run` on a stage whose choice is put to a person (`untrustedAuthority: "ask"`): the run
 * ends with the rejection's code, and its message names the pending DecisionRequest and how to
 * answer it; the answer, then a second run, carry the Task on.
 */
describe('ordivon run: a Task held on a DecisionRequest', () => {
  it('names the pending request and the command that answers it', { timeout: 120_000 }, () => {
    const dir = tempDir('ordivon-run-held-');
    const spec = decisionSpec(decisionWorld(), { survey: false });
    const stages = spec.stages!.map((s) =>
      s.decision ? { ...s, decision: { ...s.decision, untrustedAuthority: 'ask' as const } } : s,
    );
    writeFileSync(join(dir, 'spec.json'), JSON.stringify({ ...spec, stages }));
    writeFileSync(
      join(dir, 'ordivon.config.json'),
      JSON.stringify({ harnesses: { pick: DECISION_HARNESSES['pick-strip-checks'] } }),
    );
    const state = join(dir, 'state');
    const r = ordivon(dir, 'run', '--spec', 'spec.json', '--stages', 'choose=pick', '--state', state, '--json');
    assert.equal(r.status, 1, r.stderr);
    const error = r.error();
    assert.equal(error.code, 'untrusted_authority');
    assert.equal(error.state, 'authorizing.held');
    const requestId = `${error.taskId}/a1/g1/authority`;
    assert.ok(
      error.message.includes(
        `pending DecisionRequest ${requestId} (about authority): answer with ordivon decide ${error.taskId} REQUEST_ID --answer ID`,
      ),
      error.message,
    );

    // The named request is the one `decide` takes: refusing it leaves the Task waiting, nothing performed.
    const decided = ordivon(dir, 'decide', error.taskId, requestId, '--answer', 'refuse', '--state', state, '--json');
    assert.equal(decided.status, 0, decided.stderr);
    const shown = ordivon(dir, 'show', error.taskId, '--state', state, '--json');
    assert.equal(shown.json().state, 'waiting');
  });
});
