import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { importsOf } from './support/imports.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Which of the project's folders each folder's sources may import. Dependencies point one way:
 * the Host (`actors/`) on recovery, its object schemas, its statechart, store, Runtime and
 * drivers; recovery (`recovery/`) on the object schemas, the statechart and the store, never on
 * the Host that runs it; the object schemas (`objects/`) on the statechart, the store's record
 * schemas and the drivers' receipt; the Runtime on the drivers it runs and the store; the store
 * and the drivers only on `os/` (process identity, process groups and their one stop) and
 * `base/` (the coded error shape). `base/`, `os/` and `machines/`
 * import no other folder of the project.
 */
const ALLOWED: Record<string, readonly string[]> = {
  base: [],
  os: [],
  machines: [],
  store: ['os', 'base'],
  drivers: ['os', 'base'],
  runtime: ['drivers', 'store', 'os', 'base'],
  objects: ['machines', 'store', 'drivers', 'base'],
  recovery: ['objects', 'machines', 'store', 'base'],
  actors: ['recovery', 'objects', 'machines', 'store', 'runtime', 'drivers', 'os', 'base'],
};

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The top-level project folder a relative specifier in `file` points into, or undefined for a package or the same folder. */
export function targetFolder(file: string, spec: string, projectRoot: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const target = relative(projectRoot, resolve(dirname(file), spec));
  const folder = target.split(sep)[0];
  return folder === relative(projectRoot, file).split(sep)[0] ? undefined : folder;
}

describe('layering', () => {
  for (const [folder, allowed] of Object.entries(ALLOWED)) {
    it(`${folder}/ imports only ${allowed.length > 0 ? allowed.join(', ') : 'packages'} of the project's folders`, () => {
      const offenders: string[] = [];
      for (const file of sources(join(root, folder))) {
        for (const spec of importsOf(readFileSync(file, 'utf8'))) {
          const target = targetFolder(file, spec, root);
          if (target !== undefined && !allowed.includes(target))
            offenders.push(`${relative(root, file)} imports ${spec}`);
        }
      }
      assert.deepEqual(offenders, []);
    });
  }

  it('resolves specifiers to the folder they point into', () => {
    const file = join(root, 'drivers', 'acp', 'workspace-fs.ts');
    assert.equal(targetFolder(file, '../../runtime/index.js', root), 'runtime');
    assert.equal(targetFolder(file, '../confine.js', root), undefined);
    assert.equal(targetFolder(file, './client.js', root), undefined);
    assert.equal(targetFolder(file, 'zod', root), undefined);
  });
});
