import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Extractor, ExtractorConfig, type ExtractorResult } from '@microsoft/api-extractor';
import { z } from 'zod';
import type { Supervisor } from '../index.js';
import { tempDir } from './support/temp.js';

/**
 * The package's public surface changes only on purpose: each entry point of package.json
 * "exports" has an api-extractor configuration, its report is committed under etc/, and the
 * compiled declarations in dist/ must give that report exactly. docs/api.md names every export.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
/** The build's pruning of a rollup (a plain .mjs beside api-report.mjs, which tsc does not compile). */
const { pruneDeclarations } = (await import(pathToFileURL(join(root, 'tools', 'prune-declarations.mjs')).href)) as {
  pruneDeclarations: (file: string) => void;
};
const UPDATE = 'run `npx tsc -p tsconfig.json && node tools/api-report.mjs` and commit etc/ with the change';

/** Entry point (package.json "exports" key) → its api-extractor configuration. */
const CONFIGS: Record<string, string> = { '.': 'api-extractor.json', './machines': 'api-extractor.machines.json' };

const PackageExports = z.record(z.string(), z.object({ types: z.string(), default: z.string() }));

function extract(file: string, overrides: { entry?: string; temp?: string; rollup?: string } = {}): ExtractorResult {
  const path = join(root, file);
  const configObject = ExtractorConfig.loadFile(path);
  if (overrides.entry) configObject.mainEntryPointFilePath = overrides.entry;
  if (overrides.temp) configObject.apiReport = { ...configObject.apiReport!, reportTempFolder: overrides.temp };
  // The build writes dist/'s rollups (and prunes them); a test writes one only where it is told.
  if (overrides.rollup) {
    configObject.dtsRollup = { enabled: true, untrimmedFilePath: '', publicTrimmedFilePath: overrides.rollup };
    configObject.apiReport = { ...configObject.apiReport!, enabled: false };
  } else configObject.dtsRollup = { enabled: false };
  const config = ExtractorConfig.prepare({
    configObject,
    configObjectFullPath: path,
    packageJsonFullPath: join(root, 'package.json'),
  });
  // localBuild false: a report that differs is a failure, never rewritten (CI's mode). A rollup
  // alone writes no report: the build's mode, where warnings are not failures.
  return Extractor.invoke(config, {
    localBuild: overrides.rollup !== undefined,
    messageCallback: (message) => (message.handled = true),
  });
}

/** The names an api-extractor report declares at its top level. */
function reportedNames(report: string): string[] {
  const names = [
    ...report.matchAll(
      /^export (?:declare )?(?:abstract )?(?:class|function|const|type|interface|namespace|enum) (\w+)/gm,
    ),
  ];
  return [...new Set(names.map((m) => m[1]!))].sort();
}

/** The names docs/api.md lists (first column, in backticks) under the heading of `entry`. */
function documentedNames(entry: string): string[] {
  const page = readFileSync(join(root, 'docs', 'api.md'), 'utf8');
  const heading = entry === '.' ? '## `ordivon`' : `## \`ordivon/${entry.slice(2)}\``;
  const start = page.indexOf(`\n${heading}\n`);
  assert.notEqual(start, -1, `docs/api.md has no section ${heading}`);
  const end = page.indexOf('\n## ', start + 1);
  const section = page.slice(start, end === -1 ? undefined : end);
  const names = [...section.matchAll(/^\| ((?:`\w+`(?:, )?)+) \|/gm)].flatMap((m) =>
    [...m[1]!.matchAll(/`(\w+)`/g)].map((n) => n[1]!),
  );
  return [...new Set(names)].sort();
}

describe('API report', () => {
  it('has a configuration for every entry point of package.json "exports", on its declarations', () => {
    const manifest = z
      .object({ exports: PackageExports })
      .parse(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')));
    assert.deepEqual(Object.keys(manifest.exports).sort(), Object.keys(CONFIGS).sort());
    for (const [entry, file] of Object.entries(CONFIGS)) {
      const config = ExtractorConfig.loadFileAndPrepare(join(root, file));
      const { types, default: js } = manifest.exports[entry]!;
      // The report is made from tsc's declarations of the entry's module; a consumer reads the
      // one-file rollup of the same, trimmed of @internal members.
      assert.equal(config.mainEntryPointFilePath, join(root, js.replace(/^\.\//, '').replace(/\.js$/, '.d.ts')));
      assert.equal(config.publicTrimmedFilePath, join(root, types.replace(/^\.\//, '')));
    }
  });

  for (const [entry, file] of Object.entries(CONFIGS))
    it(`the declarations a consumer of ${entry} compiles import only xstate and zod, no store or driver package`, () => {
      // tsc's per-module declarations reach the store and the drivers, which import pg (its types
      // a devDependency: TS7016 in a consumer) and lmdb (TS1203 under NodeNext, skipLibCheck off).
      const rollup = join(tempDir(), 'rollup.d.ts');
      const result = extract(file, { rollup });
      assert.equal(result.succeeded, true);
      pruneDeclarations(rollup);
      const text = readFileSync(rollup, 'utf8');
      const imported = [...text.matchAll(/^import .* from '([^']+)';$/gm)].map((m) => m[1]!);
      assert.deepEqual([...new Set(imported)].sort(), ['xstate', 'zod']);
      assert.doesNotMatch(
        text,
        /^(?:export )?declare (?:class|interface|type) (?:EventStore|PgHistory|DriverPool|Runtime)\b/m,
        'no store or driver internals',
      );
      assert.match(text, /^export declare function createSupervisor|^export declare const taskMachine/m);
    });

  for (const [entry, file] of Object.entries(CONFIGS)) {
    it(`the declarations of ${entry} give exactly the committed report`, () => {
      const result = extract(file);
      assert.equal(
        result.succeeded && !result.apiReportChanged,
        true,
        `the public surface of ${entry} differs from ${result.extractorConfig.reportFilePath} ` +
          `(the new one: ${result.extractorConfig.reportTempFilePath}); if the change is meant, ${UPDATE}`,
      );
    });

    it(`docs/api.md lists every name the report of ${entry} declares, and no other`, () => {
      const config = ExtractorConfig.loadFileAndPrepare(join(root, file));
      assert.deepEqual(documentedNames(entry), reportedNames(readFileSync(config.reportFilePath, 'utf8')));
    });
  }

  it('fails when the surface gains a name the committed report lacks', () => {
    // A probe entry point: the package root plus one more export, checked against the root's report.
    const probe = join(root, 'dist', 'api-report', 'probe');
    mkdirSync(probe, { recursive: true });
    writeFileSync(join(probe, 'index.d.ts'), "export * from '../../index.js';\nexport declare const probe: number;\n");
    const result = extract('api-extractor.json', { entry: join(probe, 'index.d.ts'), temp: tempDir() });
    assert.equal(result.succeeded, false);
    assert.equal(result.apiReportChanged, true);
    assert.match(readFileSync(result.extractorConfig.reportTempFilePath, 'utf8'), /export const probe: number;/);
  });

  it('types send over the external events and keeps sendRaw for values not typed yet', () => {
    // Compile-time checks (tsc runs before the tests): each @ts-expect-error must be an error.
    const typed = (sup: Supervisor) => [
      sup.send('t', { type: 'assignment.commit', harness: 'codex', stage: 'investigate' }),
      sup.send('t', { type: 'task.cancel', reason: 'no longer needed' }, { eventId: 'cancel-1' }),
      // @ts-expect-error a Host-only fact is not an external event
      sup.send('t', { type: 'verification.record', generation: 1, passed: true }),
      // @ts-expect-error task.cancel needs its reason
      sup.send('t', { type: 'task.cancel' }),
      // @ts-expect-error an untyped value goes through sendRaw
      sup.send('t', JSON.parse('{}') as unknown),
      sup.sendRaw('t', JSON.parse('{}') as unknown),
    ];
    assert.equal(typeof typed, 'function');
  });
});
