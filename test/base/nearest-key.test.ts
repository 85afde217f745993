import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { editDistance, nearestKey, strictObject, unknownKeyMessage, zodIssue } from '../../base/index.js';

describe('nearest known key', () => {
  it('measures edits: insertions, deletions and substitutions each count one', () => {
    assert.equal(editDistance('frozenTest', 'frozenTests'), 1);
    assert.equal(editDistance('proposeCompletion', 'proposesCompletion'), 1);
    assert.equal(editDistance('kitten', 'sitting'), 3);
    assert.equal(editDistance('', 'abc'), 3);
    assert.equal(editDistance('same', 'same'), 0);
  });

  it('names the closest key within reach, ignoring case, and none when every key is far', () => {
    const known = ['command', 'args', 'frozenTests', 'timeoutMs', 'frozenTestDigests'];
    assert.equal(nearestKey('frozenTest', known), 'frozenTests');
    assert.equal(nearestKey('timeoutms', known), 'timeoutMs');
    assert.equal(nearestKey('arg', known), 'args');
    assert.equal(nearestKey('environment', known), undefined);
    assert.equal(nearestKey('x', known), undefined);
  });

  it('words the refusal with the suggestion only when there is one', () => {
    assert.equal(
      unknownKeyMessage('proposeCompletion', ['name', 'proposesCompletion']),
      'unknown key "proposeCompletion" (did you mean "proposesCompletion"?)',
    );
    assert.equal(unknownKeyMessage('colour', ['name', 'produces']), 'unknown key "colour"');
  });

  it('a strictObject refuses an unknown key at its own path, naming the nearest known key', () => {
    const Schema = z.object({ stages: z.array(strictObject({ name: z.string(), proposesCompletion: z.boolean() })) });
    const parsed = Schema.safeParse({ stages: [{ name: 'a', proposeCompletion: true }] });
    assert.equal(parsed.success, false);
    assert.deepEqual(zodIssue('invalid_spec', parsed.error!), {
      code: 'invalid_spec',
      path: 'stages.0.proposeCompletion',
      message: 'unknown key "proposeCompletion" (did you mean "proposesCompletion"?)',
    });
  });

  it('reports the unknown key before the missing field it was meant to be', () => {
    const parsed = strictObject({ reason: z.string() }).safeParse({ reson: 'x' });
    assert.deepEqual(zodIssue('invalid_event', parsed.error!), {
      code: 'invalid_event',
      path: 'reson',
      message: 'unknown key "reson" (did you mean "reason"?)',
    });
  });
});
