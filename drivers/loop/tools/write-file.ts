import { lstatSync } from 'node:fs';
import { z } from 'zod';
import { counted, done, refused, tool } from './outcome.js';
import { isRefusal, locate, writeAtomically } from './workspace.js';

const WriteInput = z.strictObject({
  path: z.string().min(1).describe('The file, relative to the workspace.'),
  content: z.string().describe("The file's whole new content."),
});

/** Lines of `text`, a last line without a newline counted too. */
export function lineCount(text: string): number {
  return text === '' ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

export const writeFile = tool({
  name: 'write_file',
  description:
    'Writes a whole file of the workspace, creating it (and its missing folders) or replacing it. To change part of an existing file, edit_file is cheaper. Files under .git and symlinks are not written.',
  input: WriteInput,
  readOnly: false,
  run(input, ctx) {
    const located = locate(ctx.workspace, input.path, 'write');
    if (isRefusal(located)) return located;
    let isFolder = false;
    try {
      isFolder = lstatSync(located.absolute).isDirectory();
    } catch {
      // not there yet: it is made
    }
    if (isFolder) return refused('not_a_file', `${located.shown} is a folder`);
    const created = writeAtomically(located, input.content);
    const size = `${counted(Buffer.byteLength(input.content), 'byte')}, ${counted(lineCount(input.content), 'line')}`;
    return done(`${created ? 'created' : 'replaced'} ${located.shown} (${size})`);
  },
});
