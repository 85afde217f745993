import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FINDINGS, NOTES, REPORT } from '../duration-v1/behaviours.js';
import type { Workload } from '../../cli/workload.js';

/** The defects of the small repo (repo/), one per file, each with its own test. */
export const DEFECTS = ['clamp', 'slugify', 'mean'] as const;
/** The one item the reviewer fan-out runs over. */
export const REVIEW_ITEM = 'joined-change';

/** The small repo with several independent defects (this folder's repo/, beside the sources). */
export const DEFECTS_REPO = fileURLToPath(new URL('../../../workloads/branch-join/repo/', import.meta.url));
/** The agents' executable (agent.ts), compiled beside this module. */
const AGENT = fileURLToPath(new URL('./agent.js', import.meta.url));
const PACKAGE_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** One textual change of a source file, refused if the text to change is not there. */
function changed(source: string, from: string, to: string, what: string): string {
  if (!source.includes(from)) throw new Error(`branch-join: ${what}: "${from}" is not in the source`);
  return source.replace(from, to);
}

/** The duration fix three ways: the workload's own (scripted/fix.patch, the unit alternation `ms` first), and a wrong one. */
export function durationFixes(duration: Workload): {
  right: string;
  wrong: string;
  rightPatch: string;
  wrongPatch: string;
} {
  const source = duration.file('repo/src/duration.js');
  const right = changed(source, '(h|m|s|ms)', '(ms|h|m|s)', 'duration-v1');
  // `ms` moved before `s` only: `m` still matches first, so "250ms" still fails.
  const wrong = changed(source, '(h|m|s|ms)', '(h|m|ms|s)', 'duration-v1');
  const rightPatch = duration.file('scripted/fix.patch');
  return {
    right,
    wrong,
    rightPatch,
    wrongPatch: rightPatch.replace('+  const part = /(\\d+)(ms|h|m|s)/y;', '+  const part = /(\\d+)(h|m|ms|s)/y;'),
  };
}

/** Each defect's fix, from the repo's own source. */
export function defectFixes(): Record<(typeof DEFECTS)[number], { file: string; text: string; note: string }> {
  const src = (name: string) => readFileSync(join(DEFECTS_REPO, 'src', `${name}.js`), 'utf8');
  return {
    clamp: {
      file: 'src/clamp.js',
      text: changed(src('clamp'), 'if (value > max) return min;', 'if (value > max) return max;', 'clamp'),
      note: '# clamp\n\nA value above the range was clamped to `min`; it is clamped to `max`.\n',
    },
    slugify: {
      file: 'src/slugify.js',
      text: changed(src('slugify'), '  return text\n', '  return text\n    .toLowerCase()\n', 'slugify'),
      note: '# slugify\n\nThe slug kept upper case; the text is lowercased first.\n',
    },
    mean: {
      file: 'src/mean.js',
      text: changed(
        src('mean'),
        'return total / numbers.length;',
        'return numbers.length === 0 ? 0 : total / numbers.length;',
        'mean',
      ),
      note: '# mean\n\nThe mean of no numbers was NaN (0 / 0); it is 0, as documented.\n',
    },
  };
}

function put(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}
const json = (value: unknown) => JSON.stringify(value, null, 2) + '\n';

/** What the demo's agents read and where they mark that they run; the gate the `--gate` runs wait at. */
export interface Kit {
  dir: string;
  marks: string;
  gate: string;
  harnesses: Record<string, Record<string, unknown>>;
}

/**
 * Lays out the kit under `dir`: per mode, the files its agent writes (the duration-v1 findings,
 * both fixes, the report; the defect list and the review request; each defect's fix and note),
 * the gate (a FIFO) and the marks folder; and the harnesses that run each mode, confined: the kit
 * readable, the marks writable.
 */
export function layKit(dir: string, duration: Workload): Kit {
  const marks = join(dir, 'marks');
  const kit = join(dir, 'kit');
  mkdirSync(marks, { recursive: true });
  mkdirSync(join(kit, 'gate'), { recursive: true });
  const fixes = durationFixes(duration);
  put(join(kit, 'investigate', 'findings.json'), json(FINDINGS));
  put(join(kit, 'wrong', 'src', 'duration.js'), fixes.wrong);
  put(join(kit, 'wrong', 'fix.patch'), fixes.wrongPatch);
  put(join(kit, 'wrong', 'notes.md'), '# Milliseconds\n\n`ms` is tried before `s`.\n');
  put(join(kit, 'right', 'src', 'duration.js'), fixes.right);
  put(join(kit, 'right', 'fix.patch'), fixes.rightPatch);
  put(join(kit, 'right', 'notes.md'), NOTES);
  put(join(kit, 'report', 'report.json'), json(REPORT));
  put(join(kit, 'list', 'defects.json'), json(DEFECTS));
  put(join(kit, 'list', 'review-request.json'), json([REVIEW_ITEM]));
  for (const [name, fix] of Object.entries(defectFixes())) {
    put(join(kit, 'fixer', name, fix.file), fix.text);
    put(join(kit, 'fixer', name, 'fixes', `${name}.md`), fix.note);
  }
  const gate = join(kit, 'gate', 'go');
  if (!existsSync(gate)) execFileSync('mkfifo', [gate]);
  const modules = join(PACKAGE_ROOT, 'node_modules');
  const harness = (...args: string[]) => ({
    driver: 'command',
    command: process.execPath,
    args: [AGENT, ...args],
    env: { ORDIVON_KIT: kit, ORDIVON_MARKS: marks },
    // Its compiled code (and the package.json that makes it a module), the kit; the marks writable.
    readable: [PACKAGE_ROOT, ...(existsSync(modules) ? [realpathSync(modules)] : []), kit],
    writable: [marks],
    timeoutMs: 600_000,
  });
  return {
    dir: kit,
    marks,
    gate,
    harnesses: {
      investigate: harness('copy', 'investigate'),
      wrong: harness('copy', 'wrong'),
      right: harness('copy', 'right', '--gate'),
      hang: harness('hang', '-'),
      report: harness('copy', 'report'),
      list: harness('copy', 'list'),
      fixer: harness('copy', 'fixer'),
      reviewer: harness('review', '-'),
    },
  };
}
