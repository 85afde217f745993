import { readdirSync, statSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { cut, done, refused, tool } from './outcome.js';
import { isRefusal, locate } from './workspace.js';

/** How many entries a listing shows; the rest are counted. */
export const MAX_LISTED = 500;
/** How many entries a listing counts past the ones it shows, so a huge tree costs a bounded walk. */
const MAX_COUNTED = 100_000;

const Input = z.strictObject({
  path: z.string().min(1).default('.').describe("The folder to list, relative to the workspace (default '.')."),
  depth: z
    .number()
    .int()
    .min(1)
    .max(5)
    .default(2)
    .describe('How many levels to go down: 1 lists only the entries of the folder itself (default 2).'),
});

function entriesOf(folder: string): Dirent[] {
  try {
    return readdirSync(folder, { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
  } catch {
    // Unreadable (permissions) or gone meanwhile: listed as it is, without its contents.
    return [];
  }
}

export const listFiles = tool({
  name: 'list_files',
  description:
    "Lists the files and folders under a folder of the workspace, as paths relative to the workspace, in tree order. Folders end with '/', symlinks with '@' (listed, not followed). The .git folder is listed but not entered. At most 500 entries are shown; the rest are counted.",
  input: Input,
  readOnly: true,
  run(input, ctx) {
    const located = locate(ctx.workspace, input.path, 'read');
    if (isRefusal(located)) return located;
    let stat;
    try {
      stat = statSync(located.absolute);
    } catch {
      return refused('file_missing', `${input.path} does not exist`);
    }
    if (!stat.isDirectory())
      return refused('not_a_directory', `${input.path} is a file, not a folder: read it with read_file`);
    const shown: string[] = [];
    let more = 0;
    const walk = (folder: string, prefix: string, levelsLeft: number): void => {
      for (const entry of entriesOf(folder)) {
        if (shown.length + more >= MAX_LISTED + MAX_COUNTED) return;
        const name = prefix + entry.name;
        const folderEntry = entry.isDirectory();
        const line = name + (folderEntry ? '/' : entry.isSymbolicLink() ? '@' : '');
        if (shown.length < MAX_LISTED) shown.push(line);
        else more++;
        // .git holds thousands of objects a model has no use for; its state is git's to report.
        if (folderEntry && levelsLeft > 1 && entry.name !== '.git')
          walk(join(folder, entry.name), name + '/', levelsLeft - 1);
      }
    };
    walk(located.absolute, located.shown === '.' ? '' : located.shown + '/', input.depth);
    if (shown.length === 0) return done(`${located.shown} is empty`);
    if (more >= MAX_COUNTED) shown.push(`… more than ${more} more (list a subfolder)`);
    else if (more > 0) shown.push(`… ${more} more (list a subfolder, or a smaller depth)`);
    return done(cut(shown.join('\n'), ctx.maxOutputChars, 'head'));
  },
});
