import { EXIT } from '../cli-io.js';
import { command, stringFlag } from '../command.js';

/**
 * `ordivon graph [--format mermaid|dot|json]`: the Task statechart exported from `taskMachine`'s
 * own definition (machines/task-graph.ts). Default `mermaid`; `--json` is `--format json`.
 */
export const graph = command({
  name: 'graph',
  summary: 'export the Task statechart from the machine definition',
  flags: {
    format: stringFlag('mermaid|dot|json', 'the output format (default mermaid; --json alone means json)', (z) =>
      z.enum(['mermaid', 'dot', 'json'], { error: 'must be mermaid, dot or json' }).optional(),
    ),
  },
  async run(values, io) {
    const format = values.format ?? (values.json ? 'json' : 'mermaid');
    const { taskGraph, toDot, toMermaid } = await import('../../machines/index.js');
    const g = taskGraph();
    if (format === 'json') io.out(JSON.stringify(g, null, 2));
    else if (format === 'mermaid') io.out(toMermaid(g).trimEnd());
    else io.out(toDot(g).trimEnd());
    return EXIT.ok;
  },
});
