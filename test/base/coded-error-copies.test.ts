import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type * as codedError from '../../base/coded-error.js';

type CodedErrorModule = typeof codedError;

/** The compiled module, copied to a folder of its own: a second install of the package, as Node loads it. */
async function loadCopy(dir: string): Promise<CodedErrorModule> {
  const file = join(dir, 'coded-error.js');
  copyFileSync(fileURLToPath(new URL('../../base/coded-error.js', import.meta.url)), file);
  return (await import(pathToFileURL(file).href)) as CodedErrorModule;
}

describe('coded errors across copies of the module', () => {
  const dirs: string[] = [];
  let a: CodedErrorModule;
  let b: CodedErrorModule;

  before(async () => {
    dirs.push(mkdtempSync(join(tmpdir(), 'coded-a-')), mkdtempSync(join(tmpdir(), 'coded-b-')));
    a = await loadCopy(dirs[0]!);
    b = await loadCopy(dirs[1]!);
  });
  after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  it('loads two distinct classes', () => {
    assert.notEqual(a.CodedError, b.CodedError);
  });

  it("accepts one copy's error in the other's isCodedError and instanceof", () => {
    const error = new a.CodedError('thing_busy', 'the thing is busy', { retryable: true });
    assert.equal(b.isCodedError(error), true);
    assert.equal(error instanceof b.CodedError, true);
    assert.equal(error instanceof Error, true);
  });

  it("accepts a layer's subclass from one copy as the same-named subclass of the other, and no other", () => {
    const StoreErrorA = class StoreError extends a.CodedError<'record_corrupt'> {};
    const StoreErrorB = class StoreError extends b.CodedError<'record_corrupt'> {};
    const HostErrorB = class HostError extends b.CodedError<'boot_failed'> {};
    const error = new StoreErrorA('record_corrupt', 'torn record');
    assert.equal(error instanceof StoreErrorB, true);
    assert.equal(error instanceof b.CodedError, true);
    assert.equal(error instanceof HostErrorB, false);
    assert.equal(new HostErrorB('boot_failed', 'no') instanceof StoreErrorA, false);
    assert.equal(b.isCodedError(error), true);
  });

  it('accepts no plain Error with a code, nor a look-alike object', () => {
    const plain = Object.assign(new Error('disk full'), { code: 'storage_failed', retryable: false });
    for (const copy of [a, b]) {
      assert.equal(copy.isCodedError(plain), false);
      assert.equal(plain instanceof copy.CodedError, false);
      assert.equal(copy.isCodedError({ code: 'storage_failed', message: 'x', retryable: false }), false);
      assert.equal(copy.isCodedError(null), false);
      assert.equal(copy.isCodedError('storage_failed'), false);
    }
  });
});
