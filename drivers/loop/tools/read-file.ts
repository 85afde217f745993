import { z } from 'zod';
import { cut, done, refused, tool } from './outcome.js';
import { isRefusal, locate, looksBinary, readWhole } from './workspace.js';

const Input = z.strictObject({
  path: z.string().min(1).describe('The file, relative to the workspace.'),
  offset: z.number().int().min(1).optional().describe('The first line to show (1 is the first line; default 1).'),
  limit: z.number().int().min(1).optional().describe('How many lines to show (default: to the end of the file).'),
});

/** The file's lines, without the empty one after a final newline. */
function linesOf(text: string): string[] {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/**
 * Lines `first`… (1-based) numbered, as many as fit in `max` characters; when some do not, a note
 * says which, and the offset to read on from.
 */
function numbered(lines: readonly string[], first: number, total: number, max: number): string {
  const shown: string[] = [];
  // Room kept for the note, so the output with it stays within `max`.
  const budget = max - 120;
  let size = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = `${first + i}\t${lines[i]}`;
    if (size + line.length + 1 > budget && shown.length > 0) {
      const from = first + i;
      const to = first + lines.length - 1;
      shown.push(`[… lines ${from}–${to} of ${total} not shown; read on with offset ${from}]`);
      return shown.join('\n');
    }
    shown.push(line);
    size += line.length + 1;
  }
  // A single line longer than the budget is cut within itself.
  return cut(shown.join('\n'), max, 'head');
}

export const readFile = tool({
  name: 'read_file',
  description:
    "Reads a text file of the workspace. Each line is shown as its line number, a tab, then the line's text; the numbers are not part of the file (leave them out of edit_file's `old`). Use offset and limit to read part of a long file; output past the size limit is cut, saying which lines to read next. Files over 8 MiB and binary files are refused.",
  input: Input,
  readOnly: true,
  run(input, ctx) {
    const located = locate(ctx.workspace, input.path, 'read');
    if (isRefusal(located)) return located;
    const bytes = readWhole(located);
    if (!Buffer.isBuffer(bytes)) return bytes;
    if (looksBinary(bytes)) return refused('file_binary', `${located.shown} is a binary file (${bytes.length} bytes)`);
    const lines = linesOf(bytes.toString('utf8'));
    if (lines.length === 0) return done(`${located.shown} is empty`);
    const first = input.offset ?? 1;
    if (first > lines.length)
      return done(`${located.shown} has ${lines.length} lines; offset ${first} is past its end`);
    const wanted = lines.slice(first - 1, input.limit === undefined ? undefined : first - 1 + input.limit);
    return done(numbered(wanted, first, lines.length, ctx.maxOutputChars));
  },
});
