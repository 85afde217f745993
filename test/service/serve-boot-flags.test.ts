import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readCheckpoints } from '../../recovery/checkpoint-store.js';
import { OBJECT_KINDS } from '../../objects/index.js';
import { EventStore } from '../../store/index.js';
import { SPEC } from '../support/tasks.js';
import { tempDir } from '../support/temp.js';
import { CLI, http, startServe } from './serve-child.js';

describe('ordivon serve --recovery / --checkpoint-every', { timeout: 60_000 }, () => {
  for (const [flags, named] of [
    [['--checkpoint-every=-1'], '--checkpoint-every:'],
    [['--checkpoint-every', '2.5'], '--checkpoint-every:'],
    [['--recovery', 'fast'], '--recovery:'],
    [['--store', 'mysql://db/ordivon'], '--store:'],
    [['--host-id', 'a'], '--host-id: only with --store'],
    [['--poll-ms', '100'], '--poll-ms: only with --store'],
    [['--no-notify'], '--no-notify: only with --store'],
    [['--advertise-url', 'http://a:1'], '--advertise-url: only with --store'],
    [['--db-connect-timeout-ms', '100'], '--db-connect-timeout-ms: only with --store'],
    [['--db-statement-timeout-ms', '100'], '--db-statement-timeout-ms: only with --store'],
    [['--store', 'postgres://127.0.0.1:1/x', '--db-statement-timeout-ms', '5'], '--db-statement-timeout-ms:'],
    [['--store', 'postgres://127.0.0.1:1/x', '--db-connect-timeout-ms', 'x'], '--db-connect-timeout-ms:'],
    [['--store', 'postgres://127.0.0.1:1/x', '--advertise-url', 'ftp://a'], '--advertise-url:'],
    [['--store', 'postgres://127.0.0.1:1/x', '--poll-ms', '5'], '--poll-ms:'],
    [['--store', 'postgres://127.0.0.1:1/x', '--lease-ms', '50'], '--lease-ms:'],
    [['--store', 'postgres://127.0.0.1:1/x', '--host-id', '-a'], '--host-id:'],
    [['ORDIVON_STORE=sqlite:x'], 'ORDIVON_STORE: expected a postgres:// or postgresql:// URL'],
  ] as const) {
    it(`refuses ${flags.join(' ')} with usage (exit 2) before opening the state root`, () => {
      const state = join(tempDir(), 'state');
      const env = flags[0].startsWith('ORDIVON_STORE=')
        ? { ORDIVON_STORE: flags[0].slice('ORDIVON_STORE='.length) }
        : {};
      const args = flags[0].startsWith('ORDIVON_STORE=') ? [] : flags;
      const r = spawnSync(
        process.execPath,
        [CLI, 'serve', '--state', state, '--port', '0', '--no-harnesses', '--json', ...args],
        { encoding: 'utf8', env: { ...process.env, ...env } },
      );
      assert.equal(r.status, 2, r.stderr);
      const error = JSON.parse(r.stderr).error as { code: string; message: string };
      assert.equal(error.code, 'usage');
      assert.ok(error.message.startsWith(named), error.message);
      assert.equal(existsSync(state), false);
    });
  }

  it('fails storage_failed (exit 1) when the --store database cannot be reached, naming it without its password, and creates no state root', () => {
    const state = join(tempDir(), 'state');
    const r = spawnSync(
      process.execPath,
      [
        CLI,
        'serve',
        '--state',
        state,
        '--port',
        '0',
        '--no-harnesses',
        '--json',
        '--store',
        'postgres://u:secret@127.0.0.1:1/x',
      ],
      { encoding: 'utf8' },
    );
    assert.equal(r.status, 1, r.stderr);
    const error = JSON.parse(r.stderr).error as { code: string; message: string };
    assert.equal(error.code, 'storage_failed');
    assert.doesNotMatch(error.message, /secret/);
    assert.equal(existsSync(state), false);
  });

  it('reports both settings when ready, counts the checkpoints taken while serving, and a later service boots from the checkpoints the first left', async () => {
    const state = join(tempDir(), 'state');
    const first = await startServe(['--state', state, '--port', '0', '--no-harnesses', '--checkpoint-every', '2']);
    // A failed check must not leave the service running (the test file would never end).
    let stopped: Awaited<ReturnType<typeof first.stop>> | undefined;
    try {
      assert.deepEqual(
        [first.ready.recovery, first.ready.checkpointEvery],
        ['checkpoint', 2],
        'checkpoint is the default',
      );
      const booted = first.ready.boot as { mode: string; tasks: number; events: number; workers: number; ms: number };
      assert.deepEqual(
        [booted.mode, booted.tasks, booted.events, booted.workers, typeof booted.ms],
        ['checkpoint', 0, 0, 0, 'number'],
        'an empty root',
      );
      assert.equal((await http(first.ready, 'POST', '/tasks', { body: { ...SPEC, taskId: 'flags-1' } })).status, 201);
      for (const purpose of ['diagnose', 'repair']) {
        const sent = await http(first.ready, 'POST', '/tasks/flags-1/events', {
          body: { type: 'assignment.commit', harness: 'codex', purpose },
        });
        assert.equal(sent.status, 200, JSON.stringify(sent.body));
      }
      // Revision 2 came due (2 events since none), revision 3 did not (1 since 2): one checkpoint
      // taken while serving, written or still being written.
      const { checkpoints } = (await http(first.ready, 'GET', '/status')).body as {
        checkpoints: { every: number; written: number; failed: number; pending: number };
      };
      assert.deepEqual([checkpoints.every, checkpoints.written + checkpoints.pending, checkpoints.failed], [2, 1, 0]);
      stopped = await first.stop();
    } finally {
      if (!stopped) await first.stop();
    }
    assert.deepEqual(stopped, { code: 0, signal: null });
    const store = EventStore.open({ root: state, kinds: OBJECT_KINDS, readOnly: true });
    try {
      assert.equal((readCheckpoints(store).get('flags-1') as { revision: number }).revision, 3);
    } finally {
      await store.close();
    }

    const second = await startServe(['--state', state, '--port', '0', '--no-harnesses', '--recovery', 'checkpoint']);
    try {
      assert.deepEqual([second.ready.recovery, second.ready.checkpointEvery], ['checkpoint', null]);
      const health = (await http(second.ready, 'GET', '/status')).body as {
        boot: { mode: string; tasks: number; events: number; replayed: number; checkpoint: object };
      };
      // Every event verified, none replayed: the checkpoint at the head is in the chain.
      assert.deepEqual(
        [health.boot.mode, health.boot.tasks, health.boot.events, health.boot.replayed, health.boot.checkpoint],
        ['checkpoint', 1, 3, 0, { trusted: 1, tailReplayed: 0, fullReplayed: 0, codeChanged: 0, headMismatch: 0 }],
      );
      assert.deepEqual(second.ready.boot, health.boot, 'the ready line and /status give the same report');
      const listed = await http(second.ready, 'GET', '/tasks');
      assert.deepEqual(
        (listed.body as Array<{ taskId: string; revision: number; state: string }>).map((t) => [
          t.taskId,
          t.revision,
          t.state,
        ]),
        [['flags-1', 3, 'assigned.compiling']],
      );
    } finally {
      await second.stop();
    }
  });
});
