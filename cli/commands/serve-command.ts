import { command } from '../command.js';
import { serveFlags } from './serve-flags.js';

/**
 * `ordivon serve`: the supervisor as a long-running service with the JSON control API, SSE and
 * the local page. It runs the full Host with the harnesses of its configuration (`--config FILE`,
 * else `./ordivon.config.json` when present); with none, the bare supervisor (Tasks wait at their
 * frontier), as with `--no-harnesses`. `--demo-harnesses` runs the demo's scripted harnesses
 * (`codex`, `hermes`: real provider binaries against loopback scripted models) so the demo
 * workload can be driven through the API. Exits 0 after SIGTERM/SIGINT has drained it; 1 when it
 * cannot start; 2 for bad flags or a configuration it refuses (before the state root is opened).
 */
export const serve = command({
  name: 'serve',
  summary: 'run the supervisor as a service: JSON control API, SSE, page at /',
  details: [
    'send/show/list talk to it while it holds the state root. It runs the harnesses of --config FILE or',
    './ordivon.config.json (none: the bare supervisor); --demo-harnesses runs the scripted demo ones (codex, hermes).',
    'Exits 0 after SIGTERM/SIGINT has drained it, 1 when it cannot start, 2 for bad flags or a refused configuration.',
    'With --json it prints exactly one line when ready: {"listening": {url, port|socket, pid, state, ...}}.',
  ],
  flags: serveFlags,
  async run(values, io): Promise<number> {
    // The Host, the store and the service load when the command runs, not with the command table.
    return (await import('./serve.js')).serveHost(values, io);
  },
});
