import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { tempDir } from '../support/temp.js';
import { http, startServe } from './serve-child.js';

const spec = (taskId: string) => ({
  taskId,
  title: 'Assign a harness',
  goal: 'Name a harness.',
  requiredArtifacts: [{ name: 'out.json' }],
});

describe('an assignment.commit naming a harness the Host does not run', { timeout: 90_000 }, () => {
  it('is retained and refused harness_unknown at admission, naming it and the configured ones, and stays so after a reboot', async () => {
    const dir = tempDir();
    const state = join(dir, 'state');
    const config = join(dir, 'harnesses.json');
    // The harness never gets to run here: only its name matters.
    writeFileSync(
      config,
      JSON.stringify({ harnesses: { probe: { driver: 'command', command: process.execPath, args: ['-e', ''] } } }),
    );
    const args = ['--state', state, '--port', '0', '--config', config];
    const first = await startServe(args);
    let refusedAt: number;
    try {
      assert.equal((await http(first.ready, 'POST', '/tasks', { body: spec('hu-1') })).status, 201);
      const sent = await http(first.ready, 'POST', '/tasks/hu-1/events', {
        body: { type: 'assignment.commit', harness: 'ghost', stage: 'work' },
      });
      assert.equal(sent.status, 200, sent.text);
      assert.deepEqual(
        [sent.body.admitted, sent.body.written, sent.body.code, sent.body.state],
        [false, true, 'harness_unknown', 'open'],
      );
      refusedAt = sent.body.revision as number;
    } finally {
      assert.equal((await first.stop()).code, 0, first.stderr());
    }
    const line = first
      .stderr()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.msg === 'transition refused' && l.code === 'harness_unknown');
    assert.deepEqual([line?.taskId, line?.event, line?.revision], ['hu-1', 'assignment.commit', refusedAt]);

    // Boot replays the stored event and decides as admission did: still a refusal, same detail.
    const second = await startServe(args);
    try {
      const shown = await http(second.ready, 'GET', '/tasks/hu-1?events=1');
      assert.equal(shown.body.state, 'open');
      const rejection = (shown.body.rejections as Array<Record<string, unknown>>).at(-1)!;
      assert.deepEqual(
        [rejection.revision, rejection.event, rejection.code],
        [refusedAt, 'assignment.commit', 'harness_unknown'],
      );
      assert.equal(rejection.detail, 'no harness named ghost is configured (configured: probe)');
      const stored = (shown.body.events as Array<Record<string, any>>).find((e) => e.revision === refusedAt)!;
      assert.deepEqual(stored.disposition, { admitted: false, code: 'harness_unknown' });

      // The refusal moved no generation: the next Assignment, to a configured harness, is admitted.
      const next = await http(second.ready, 'POST', '/tasks/hu-1/events', {
        body: { type: 'assignment.commit', harness: 'probe', stage: 'work', generation: 1 },
      });
      assert.deepEqual([next.status, next.body.admitted], [200, true], next.text);
    } finally {
      assert.equal((await second.stop()).code, 0, second.stderr());
    }
  });

  it('a bare supervisor does not check harness names; a harness list a client sends is refused, not kept', async () => {
    const dir = tempDir();
    const serve = await startServe(['--state', join(dir, 'state'), '--port', '0', '--no-harnesses']);
    try {
      assert.equal((await http(serve.ready, 'POST', '/tasks', { body: spec('hu-2') })).status, 201);
      // The list is the Host's to write into the event: from a client it is an unknown key, and nothing is written.
      const forged = await http(serve.ready, 'POST', '/tasks/hu-2/events', {
        body: { type: 'assignment.commit', harness: 'ghost', stage: 'work', harnesses: ['other'] },
      });
      assert.deepEqual(
        [forged.status, forged.body.written, forged.body.code, forged.body.path],
        [400, false, 'invalid_event', 'harnesses'],
        forged.text,
      );
      const sent = await http(serve.ready, 'POST', '/tasks/hu-2/events', {
        body: { type: 'assignment.commit', harness: 'ghost', stage: 'work' },
      });
      assert.deepEqual([sent.status, sent.body.admitted], [200, true], sent.text);
      const events = (await http(serve.ready, 'GET', '/tasks/hu-2/events')).body.events as Array<Record<string, any>>;
      const stored = events.filter((e) => e.type === 'assignment.commit');
      assert.equal(stored.length, 1, 'only the admitted commit is stored');
      assert.equal('harnesses' in stored[0]!.data, false, JSON.stringify(stored));
    } finally {
      assert.equal((await serve.stop()).code, 0, serve.stderr());
    }
  });
});
