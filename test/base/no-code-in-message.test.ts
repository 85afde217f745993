import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/** Folders that are not the project's sources (tests may match messages: they read them as people do). */
const SKIP = new Set(['test', 'node_modules', 'dist']);

/**
 * Ways of reading something back out of an error's `message` or a failure's `detail`: a regex run
 * on it, a string method that looks inside it, or a code-prefix regex (`/^[a-z_]+:/`) run on
 * anything. A code, a field path or a retryability is a field of the error, never parsed from text.
 */
const PATTERNS: readonly RegExp[] = [
  /\.(?:exec|test|match|matchAll)\(\s*[\w$.()?!\s]*?\b(?:message|detail)\s*,?\s*\)/g,
  /\b(?:message|detail)\s*[?!]?\.\s*(?:match|matchAll|startsWith|endsWith|includes|indexOf|lastIndexOf|search|replace|replaceAll|slice|substring|substr)\s*\(/g,
  // `split('\n')` keeps the first line for display; any other split takes the text apart.
  /\b(?:message|detail)\s*[?!]?\.\s*split\s*\(\s*(?!['"`]\\n['"`]\s*\))/g,
  /\/\^\(?\[[a-z][^\]]*\][+*]\)?\\?:/g,
];

/**
 * Sites that may still parse a message, each with why. Empty: every layer's error carries its
 * code and path as fields. An entry that matches nothing any more fails the test.
 */
const ALLOWED: ReadonlyArray<{ file: string; text: string; why: string }> = [];

export interface Site {
  line: number;
  text: string;
}

/** Every place in `source` that reads a code (or anything) back out of a message or detail. */
export function messageParsingSites(source: string): Site[] {
  const sites: Site[] = [];
  for (const pattern of PATTERNS) {
    for (const match of source.matchAll(pattern)) {
      const index = match.index;
      const line = source.slice(0, index).split('\n').length;
      const start = source.lastIndexOf('\n', index) + 1;
      const end = source.indexOf('\n', index + match[0].length);
      sites.push({ line, text: source.slice(start, end === -1 ? undefined : end).trim() });
    }
  }
  return sites.sort((a, b) => a.line - b.line);
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name.startsWith('.') || SKIP.has(entry.name)) return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return /\.[cm]?ts$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

describe('no error code is parsed out of a message', () => {
  it('finds the patterns it looks for (and not their look-alikes)', () => {
    const parsing = [
      "throw new ApiError(400, 'invalid_spec', error.message, /task spec (\\S+):/.exec(error.message)?.[1]);",
      "const code = error.message.split(': ')[0];",
      'if (result.detail.startsWith(`acp_timeout`)) retry();',
      'const m = (error as Error).message.match(/^(\\w+):/);',
      'if (/^[a-z_]+:/.test(text)) return;',
      "const [code] = detail.split(':');",
      'const found = /ENOENT/.test(\n  failure.detail,\n);',
    ];
    for (const line of parsing) assert.equal(messageParsingSites(line).length > 0, true, line);
    const fine = [
      'throw new RuntimeError(code, `${prefix}: ${describeIssues(error)}`, { path });',
      "note: `cannot be loaded (${(error as Error).message.split('\\n')[0]})`,",
      'if (error.code === "acp_timeout") retry();',
      'const lastMessage = stderr.split("\\n").at(-1);',
      'sendJson(res, 400, { error: { code, message, path } });',
    ];
    for (const line of fine) assert.deepEqual(messageParsingSites(line), [], line);
  });

  it('in any source file outside test/ (an explicit allow-list aside)', () => {
    const offenders: string[] = [];
    const used = new Set<(typeof ALLOWED)[number]>();
    for (const path of sources(root)) {
      const file = relative(root, path).split(sep).join('/');
      for (const site of messageParsingSites(readFileSync(path, 'utf8'))) {
        const allowed = ALLOWED.find((a) => a.file === file && site.text.includes(a.text));
        if (allowed !== undefined) used.add(allowed);
        else offenders.push(`${file}:${site.line}: ${site.text}`);
      }
    }
    assert.deepEqual(offenders, [], `code parsed out of a message:\n${offenders.join('\n')}`);
    const stale = ALLOWED.filter((a) => !used.has(a)).map((a) => `${a.file}: ${a.text}`);
    assert.deepEqual(stale, [], 'allow-list entries that match nothing any more: delete them');
  });
});
