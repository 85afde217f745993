import assert from 'node:assert/strict';
import { mkdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { renewAdoptedWrites } from '../../drivers/loop/adopted-writes.js';
import type { LogRecord } from '../../drivers/loop/step-log.js';
import { tempDir } from '../support/temp.js';

const at = '2026-12-06T00:00:00.000Z';
const intent = (id: string, name: string, args: unknown): LogRecord => ({
  t: 'tool_intent',
  call: { id, name, arguments: typeof args === 'string' ? args : JSON.stringify(args) },
  at,
});
const result = (callId: string, name: string, ok: boolean): LogRecord => ({
  t: 'tool_result',
  callId,
  name,
  outcome: ok ? { ok, output: 'written', outputChars: 7 } : { ok, output: 'refused', outputChars: 7 },
  at,
});

describe("a resumed loop renews the files its adopted calls wrote, so they count as this run's", () => {
  it('renews successful write_file and edit_file targets of the adopted steps only, inside the workspace', () => {
    const workspace = tempDir('ordivon-adopted-');
    mkdirSync(join(workspace, 'src'));
    const old = new Date('2020-01-01T00:00:00Z');
    for (const name of ['fix.patch', 'src/duration.js', 'refused.md', 'own.md', 'listed.md']) {
      writeFileSync(join(workspace, name), 'bytes\n');
      utimesSync(join(workspace, name), old, old);
    }
    const records: LogRecord[] = [
      {
        t: 'start',
        generation: 3,
        runId: 'r/g3',
        conversation: 'fix',
        contextDigest: 'sha256:x',
        adopted: { generation: 2, records: 10 },
        at,
      },
      intent('c1', 'write_file', { path: 'fix.patch', content: 'bytes\n' }),
      result('c1', 'write_file', true),
      intent('c2', 'edit_file', { path: 'src/duration.js', old: 'a', new: 'b' }),
      result('c2', 'edit_file', true),
      intent('c3', 'write_file', { path: 'refused.md', content: 'x' }),
      result('c3', 'write_file', false),
      intent('c4', 'write_file', { path: '../outside.md', content: 'x' }),
      result('c4', 'write_file', true),
      intent('c5', 'list_files', { path: 'listed.md' }),
      result('c5', 'list_files', true),
      // This generation's own call: the Runtime saw it happen.
      intent('c6', 'write_file', { path: 'own.md', content: 'bytes\n' }),
      result('c6', 'write_file', true),
    ];
    const now = new Date('2026-12-06T12:00:00Z');
    assert.deepEqual(renewAdoptedWrites(records, workspace, now), ['fix.patch', 'src/duration.js']);
    const mtime = (name: string) => statSync(join(workspace, name)).mtime.toISOString();
    assert.equal(mtime('fix.patch'), now.toISOString());
    assert.equal(mtime('src/duration.js'), now.toISOString());
    for (const untouched of ['refused.md', 'own.md', 'listed.md']) assert.equal(mtime(untouched), old.toISOString());
  });

  it('renews nothing for a conversation that adopted nothing, or a file removed since', () => {
    const workspace = tempDir('ordivon-adopted-');
    const fresh: LogRecord[] = [
      { t: 'start', generation: 1, runId: 'r/g1', conversation: 'fix', contextDigest: 'sha256:x', at },
      intent('c1', 'write_file', { path: 'a.md', content: 'x' }),
      result('c1', 'write_file', true),
    ];
    writeFileSync(join(workspace, 'a.md'), 'x');
    assert.deepEqual(renewAdoptedWrites(fresh, workspace), []);
    const gone: LogRecord[] = [
      { ...fresh[0]!, adopted: { generation: 1, records: 2 } } as LogRecord,
      ...fresh.slice(1),
    ];
    gone[1] = intent('c1', 'write_file', { path: 'gone.md', content: 'x' });
    assert.deepEqual(renewAdoptedWrites(gone, workspace), []);
  });
});
