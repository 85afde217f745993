import { TextDecoder } from 'node:util';
import { z } from 'zod';
import { counted, done, refused, tool, type ToolOutcome } from './outcome.js';
import { lineCount } from './write-file.js';
import { isRefusal, locate, looksBinary, readWhole, writeAtomically } from './workspace.js';

const Input = z.strictObject({
  path: z.string().min(1).describe('The file, relative to the workspace.'),
  old: z
    .string()
    .min(1)
    .describe('The exact text to replace, whitespace included; it must occur exactly once in the file.'),
  new: z.string().describe('The text to put in its place.'),
});

/** A strict decoder: invalid UTF-8 throws instead of becoming U+FFFD, and a BOM is kept as text. */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The file's text, when writing it back changes no byte but the edited ones; otherwise the refusal. */
function editableText(bytes: Buffer, shown: string): string | ToolOutcome {
  if (looksBinary(bytes)) return refused('file_binary', `${shown} is a binary file; edit_file edits text`);
  try {
    return utf8.decode(bytes);
  } catch {
    return refused('file_binary', `${shown} is not valid UTF-8; edit_file would corrupt it`);
  }
}

export const editFile = tool({
  name: 'edit_file',
  description:
    'Replaces one exact piece of text in a file of the workspace: `old` must occur exactly once (give enough surrounding lines to make it unique), and is replaced by `new`. Copy `old` from read_file without its line numbers. Files under .git and symlinks are not edited.',
  input: Input,
  readOnly: false,
  run(input, ctx) {
    const located = locate(ctx.workspace, input.path, 'write');
    if (isRefusal(located)) return located;
    const bytes = readWhole(located);
    if (!Buffer.isBuffer(bytes)) return bytes;
    const text = editableText(bytes, located.shown);
    if (typeof text !== 'string') return text;
    const at = text.indexOf(input.old);
    if (at === -1)
      return refused(
        'edit_no_match',
        `old occurs 0 times in ${located.shown}; read the file again and copy the text exactly`,
      );
    let count = 0;
    for (let i = at; i !== -1; i = text.indexOf(input.old, i + 1)) count++;
    if (count > 1)
      return refused(
        'edit_ambiguous',
        `old occurs ${count} times in ${located.shown}; include more surrounding lines to make it unique`,
      );
    // Sliced, not String.replace, whose `$&` and `$1` in `new` would be read as patterns.
    writeAtomically(located, text.slice(0, at) + input.new + text.slice(at + input.old.length));
    const firstLine = text.slice(0, at).split('\n').length;
    return done(
      `edited ${located.shown}: ${counted(lineCount(input.old) || 1, 'line')} from line ${firstLine} replaced by ${counted(lineCount(input.new), 'line')}`,
    );
  },
});
