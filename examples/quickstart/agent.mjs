// A stand-in for your own agent behind the `command` driver: it reads the Context the Host
// compiled (the prompt) on stdin, works in its cwd (the Task Attempt's workspace) and leaves the
// stage's artifacts there. The Host checks them against their contracts; what this prints is
// only evidence.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

const prompt = readFileSync(0, 'utf8');
const stage = /^Stage: (\S+)/m.exec(prompt)?.[1];
if (stage === 'investigate') {
  let output = '';
  try {
    output = execFileSync('node', ['--test', 'test/'], { encoding: 'utf8' });
  } catch (failed) {
    output = failed.stdout;
  }
  const failing = [...output.matchAll(/^not ok \d+ - (.+)$/gm)].map((m) => m[1]);
  const cause = 'the unit pattern (h|m|s|ms) tries "m" before "ms"';
  writeFileSync('findings.json', JSON.stringify({ failing, cause }, null, 2));
} else if (stage === 'fix') {
  const source = readFileSync('src/duration.js', 'utf8');
  writeFileSync('src/duration.js', source.replace('(h|m|s|ms)', '(ms|h|m|s)'));
  writeFileSync('report.md', '# Milliseconds parse again\n\nThe unit pattern now tries `ms` before `m`.\n');
}
console.log(`stage ${stage}: done`);
