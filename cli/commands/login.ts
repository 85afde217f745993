import { CliError, EXIT, emit } from '../cli-io.js';
import { command } from '../command.js';

/**
 * `ordivon login [--state DIR]`: a new one-time page-login URL from the service holding the state
 * root (`POST /login` with the token its `service.json` names), as `serve` prints one when it
 * starts. Exit 1 `service_not_running` when no service holds the root; `route_not_found` when it
 * listens on a unix socket (no page there).
 */
export const login = command({
  name: 'login',
  summary: 'print a new one-time URL that opens the page of the service running on the state root',
  details: [
    'Each URL works once and is not the bearer token; asking again gives another. Reads the token from',
    '<state>/service.json, so only the account that can read that file gets one.',
  ],
  async run(values, io) {
    const { loginViaService, serviceFor } = await import('../service/cli-route.js');
    const service = serviceFor(values.state);
    if (!service)
      throw new CliError(
        'service_not_running',
        'no `ordivon serve` holds this state root: start one, or name its --state',
      );
    const url = await loginViaService(service);
    emit(io, { login: url }, () => url);
    return EXIT.ok;
  },
});
