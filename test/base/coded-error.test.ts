import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { CodedError, describeIssues, isCodedError, zodIssue } from '../../base/index.js';

class LayerError extends CodedError<'thing_missing' | 'thing_busy'> {}

describe('the coded error shape', () => {
  it('carries code, path and retryable as fields and gives them back as data', () => {
    const error = new LayerError('thing_busy', 'the thing is busy', { path: 'things.0', retryable: true });
    assert.equal(error.name, 'LayerError');
    assert.ok(isCodedError(error));
    assert.deepEqual(error.toData(), {
      code: 'thing_busy',
      message: 'the thing is busy',
      path: 'things.0',
      retryable: true,
    });
  });

  it('is terminal and pathless unless told otherwise', () => {
    const error = new LayerError('thing_missing', 'no thing');
    assert.deepEqual(error.toData(), { code: 'thing_missing', message: 'no thing', retryable: false });
    assert.equal(isCodedError(new Error('plain')), false);
  });
});

describe('zod issues as data', () => {
  const Input = z.object({ evidence: z.record(z.string(), z.string().startsWith('sha256:')), n: z.number() });

  it('names the first offending field with the caller’s code', () => {
    const parsed = Input.safeParse({ evidence: { 'completion.json': 'md5:x' }, n: 1 });
    assert.equal(parsed.success, false);
    const issue = zodIssue('invalid_event', parsed.error!);
    assert.equal(issue.code, 'invalid_event');
    assert.equal(issue.path, 'evidence.completion.json');
    assert.match(issue.message, /sha256:/);
  });

  it('reports a root-level failure as (root) and lists every issue in a description', () => {
    const root = Input.safeParse(7);
    assert.equal(zodIssue('invalid_spec', root.error!).path, '(root)');
    const both = Input.safeParse({ evidence: 1, n: 'x' });
    assert.match(describeIssues(both.error!), /^evidence: .+; n: .+$/);
  });
});
