// Regenerates the committed API reports (etc/*.api.md) from the compiled declarations in dist/:
// run `npx tsc -p tsconfig.json && node scripts/api-report.mjs` after changing the public surface,
// and commit the reports with the change. test/api-report.test.ts fails while they differ.
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
/** One api-extractor configuration per entry point of package.json "exports". */
export const API_REPORT_CONFIGS = ['api-extractor.json', 'api-extractor.machines.json'];

let failed = false;
for (const file of API_REPORT_CONFIGS) {
  const config = ExtractorConfig.loadFileAndPrepare(`${root}${file}`);
  const result = Extractor.invoke(config, { localBuild: true });
  console.log(`${file}: ${result.apiReportChanged ? 'updated' : 'unchanged'} ${config.reportFilePath}`);
  if (!result.succeeded) failed = true;
}
process.exitCode = failed ? 1 : 0;
