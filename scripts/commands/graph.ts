import { taskGraph, toDot, toMermaid } from '../../machines/task-graph.js';
import { CliError, EXIT, parse, type Io } from '../cli-io.js';

/**
 * `ordivon graph [--format mermaid|dot|json]`: the Task statechart exported from `taskMachine`'s
 * own definition (machines/task-graph.ts). Default `mermaid`; `--json` is `--format json`.
 */
export async function graph(argv: string[], io: Io): Promise<number> {
  const { values } = parse(argv, { format: { type: 'string' }, json: { type: 'boolean' }, state: { type: 'string' } });
  const format = values.format ?? (values.json ? 'json' : 'mermaid');
  const g = taskGraph();
  if (format === 'json') io.out(JSON.stringify(g, null, 2));
  else if (format === 'mermaid') io.out(toMermaid(g).trimEnd());
  else if (format === 'dot') io.out(toDot(g).trimEnd());
  else throw new CliError('usage', '--format must be mermaid, dot or json', EXIT.usage);
  return EXIT.ok;
}
