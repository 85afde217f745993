// Regenerates the committed API reports (etc/*.api.md) from the compiled declarations in dist/:
// run `npx tsc -p tsconfig.json && node tools/api-report.mjs` after changing the public surface,
// and commit the reports with the change. test/api-report.test.ts fails while they differ.
//
// Both runs also write each entry point's declarations as one file, trimmed of `@internal` members
// (dist/ordivon.d.ts, dist/machines/ordivon-machines.d.ts): the `types` of package.json "exports".
// The per-module declarations tsc writes reach the store and the drivers, whose own declarations
// import `pg` (types a devDependency) and lmdb (whose index.d.ts fails TS1203 under NodeNext): a
// consumer compiling with `skipLibCheck: false` got both errors. `--rollup` (the build's) writes
// only those files and leaves the reports alone.
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pruneDeclarations } from './prune-declarations.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
/** One api-extractor configuration per entry point of package.json "exports". */
export const API_REPORT_CONFIGS = ['api-extractor.json', 'api-extractor.machines.json'];
const rollupOnly = process.argv.includes('--rollup');

let failed = false;
for (const file of API_REPORT_CONFIGS) {
  const path = join(root, file);
  const configObject = ExtractorConfig.loadFile(path);
  if (rollupOnly) configObject.apiReport = { ...configObject.apiReport, enabled: false };
  const config = ExtractorConfig.prepare({
    configObject,
    configObjectFullPath: path,
    packageJsonFullPath: join(root, 'package.json'),
  });
  const result = Extractor.invoke(config, {
    localBuild: true,
    // The build's run prints nothing but its failures.
    ...(rollupOnly ? { messageCallback: (message) => (message.handled = message.logLevel !== 'error') } : {}),
  });
  if (result.succeeded) pruneDeclarations(config.publicTrimmedFilePath);
  if (rollupOnly) console.log(`${file}: ${config.publicTrimmedFilePath}`);
  else console.log(`${file}: ${result.apiReportChanged ? 'updated' : 'unchanged'} ${config.reportFilePath}`);
  if (!result.succeeded) failed = true;
}
process.exitCode = failed ? 1 : 0;
