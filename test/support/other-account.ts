import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { TestContext } from 'node:test';

/** Debian's `nobody` / `nogroup`: another local account, with no files of its own. */
export const NOBODY = 65534;

/**
 * Whether this process can run code as `nobody` (it must be root, as modes mean nothing to root).
 * When it cannot, the test is skipped saying why; under CI=true it fails instead.
 */
export function canActAsNobody(t: TestContext): boolean {
  const able =
    process.getuid?.() === 0 &&
    spawnSync(process.execPath, ['-e', '0'], { uid: NOBODY, gid: NOBODY, cwd: '/' }).status === 0;
  if (able) return true;
  assert.notEqual(process.env.CI, 'true', 'CI=true needs root and the nobody account');
  t.skip('no other account to act as: needs root and the nobody account');
  return false;
}

/**
 * What each of `paths` gives `nobody` (supplementary groups dropped): `ok`, or the error code of
 * its read (`readdir` for `{dir}`, else a whole-file read). The code runs as `node -e` from `/`,
 * so it needs nothing of this checkout (which `nobody` may not be able to enter).
 */
export function readsAsNobody(paths: ReadonlyArray<string | { dir: string }>): string[] {
  const script = `
    const fs = require('node:fs');
    const out = ${JSON.stringify(paths)}.map((p) => {
      try {
        if (typeof p === 'string') fs.readFileSync(p);
        else fs.readdirSync(p.dir);
        return 'ok';
      } catch (e) {
        return e.code;
      }
    });
    console.log(JSON.stringify({ uid: process.getuid(), out }));`;
  const r = spawnSync(process.execPath, ['-e', script], { uid: NOBODY, gid: NOBODY, cwd: '/', encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const { uid, out } = JSON.parse(r.stdout) as { uid: number; out: string[] };
  assert.equal(uid, NOBODY);
  return out;
}
