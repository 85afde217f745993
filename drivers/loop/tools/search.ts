import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { cut, done, refused, tool } from './outcome.js';
import { isRefusal, locate, looksBinary, MAX_FILE_BYTES } from './workspace.js';

/** A matching line is shown up to this many characters. */
const MAX_LINE_CHARS = 240;

const Input = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .refine((pattern) => !pattern.includes('\n'), 'a pattern is matched within one line: no newline')
    .describe('The text to find: a literal, case-sensitive substring of one line (not a regular expression).'),
  path: z
    .string()
    .min(1)
    .default('.')
    .describe("The folder (searched recursively) or file to search, relative to the workspace (default '.')."),
  maxResults: z.number().int().min(1).max(200).default(100).describe('How many matching lines to show (default 100).'),
});

/** The files under `folder` (or `folder` itself, when it is a file), in sorted order, symlinks and `.git` left out. */
function* filesUnder(absolute: string, shown: string): Generator<{ absolute: string; shown: string }> {
  // lstat: a symlink is neither, so it is not followed (its target is searched under its own path,
  // or is not the workspace's).
  const stat = lstatSync(absolute);
  if (stat.isFile()) {
    yield { absolute, shown };
    return;
  }
  if (!stat.isDirectory()) return;
  let names: string[];
  try {
    names = readdirSync(absolute).sort();
  } catch {
    return;
  }
  for (const name of names) {
    if (name === '.git') continue;
    yield* filesUnder(join(absolute, name), shown === '.' ? name : `${shown}/${name}`);
  }
}

export const search = tool({
  name: 'search',
  description:
    'Finds the lines of the workspace\'s text files that contain a literal substring (case-sensitive; not a regular expression). Answers one "file:line: text" line per match, files in sorted order. Binary files, files over 8 MiB, symlinks and the .git folder are skipped.',
  input: Input,
  readOnly: true,
  run(input, ctx) {
    const located = locate(ctx.workspace, input.path, 'read');
    if (isRefusal(located)) return located;
    try {
      lstatSync(located.absolute);
    } catch {
      return refused('file_missing', `${input.path} does not exist`);
    }
    const found: string[] = [];
    let skipped = 0;
    let more = false;
    walk: for (const file of filesUnder(located.absolute, located.shown)) {
      let bytes: Buffer;
      try {
        if (lstatSync(file.absolute).size > MAX_FILE_BYTES) {
          skipped++;
          continue;
        }
        bytes = readFileSync(file.absolute);
      } catch {
        continue; // unreadable, or gone meanwhile
      }
      if (looksBinary(bytes) || !bytes.includes(input.pattern)) continue;
      const lines = bytes.toString('utf8').split('\n');
      for (let i = 0; i < lines.length; i++) {
        const line = lines[i]!;
        if (!line.includes(input.pattern)) continue;
        if (found.length === input.maxResults) {
          more = true;
          break walk;
        }
        const text = line.length > MAX_LINE_CHARS ? line.slice(0, MAX_LINE_CHARS) + '…' : line;
        found.push(`${file.shown}:${i + 1}: ${text}`);
      }
    }
    const notes: string[] = [];
    if (more) notes.push(`… stopped at ${input.maxResults} matches; narrow the pattern or the path for the rest`);
    if (skipped > 0) notes.push(`(${skipped} files over ${MAX_FILE_BYTES} bytes were not searched)`);
    if (found.length === 0)
      return done([`no line under ${located.shown} contains ${JSON.stringify(input.pattern)}`, ...notes].join('\n'));
    return done(cut([...found, ...notes].join('\n'), ctx.maxOutputChars, 'head'));
  },
});
