#!/usr/bin/env node
// The branch-join demo's scripted agents, as one `command` harness per mode: the prompt on stdin,
// the workspace the cwd. What each writes the demo prepared in its kit (ORDIVON_KIT, readable):
// `copy MODE` copies kit/MODE/ into the workspace (`copy fixer` the folder of the defect its
// prompt names, `DEFECT=<name>`); `--gate` first waits until the demo opens the FIFO kit/gate/go;
// `hang` marks that it runs (a file in ORDIVON_MARKS) and never ends; `review` runs the tests of
// the joined change in its workspace and writes review.md with its verdict.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [mode = '', what = '', ...rest] = process.argv.slice(2);
const kit = process.env['ORDIVON_KIT'] ?? '';
const prompt = readFileSync(0, 'utf8');

function main(): void {
  if (rest.includes('--gate')) readFileSync(join(kit, 'gate', 'go'));
  if (mode === 'hang') {
    writeFileSync(join(process.env['ORDIVON_MARKS'] ?? '', `hang-${randomUUID()}`), `${process.pid}\n`);
    setInterval(() => {}, 1 << 30);
    return;
  }
  if (mode === 'copy') {
    const from = what === 'fixer' ? join('fixer', /DEFECT=([a-z]+)/.exec(prompt)?.[1] ?? '?') : what;
    cpSync(join(kit, from), process.cwd(), { recursive: true });
    process.stdout.write(`${from}: wrote ${listed(join(kit, from)).join(', ')}\n`);
    return;
  }
  if (mode === 'review') {
    const tests = spawnSync(process.execPath, ['--test', 'test/'], { encoding: 'utf8' });
    const counts = /# pass (\d+)[\s\S]*# fail (\d+)/.exec(tests.stdout);
    const fixes = existsSync('fixes') ? readdirSync('fixes').sort() : [];
    const approve = tests.status === 0 && fixes.length > 0;
    writeFileSync(
      'review.md',
      [
        '# Review of the joined change',
        '',
        `verdict: ${approve ? 'approve' : 'request changes'}`,
        `tests: ${counts ? `${counts[1]} pass, ${counts[2]} fail` : 'not run'} (node --test test/)`,
        `fixes: ${fixes.map((f) => `fixes/${f}`).join(', ') || 'none'}`,
        '',
      ].join('\n'),
    );
    process.stdout.write(`review: ${approve ? 'approve' : 'request changes'}\n`);
    return;
  }
  throw new Error(`unknown mode ${mode}`);
}

function listed(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? listed(join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`],
  );
}

main();
