// THE MODEL RELAY of the red-team suite's `network: "none"` runs. Compiled with the tests, copied (as
// relay.mjs) beside the attack program. A harness whose network is `none` has a loopback of its own
// with nothing on it, so a real agent could not reach its scripted model there. This wrapper is the
// harness's command: `node relay.mjs <unix socket> <port> <command> <args…>` listens on
// 127.0.0.1:<port> inside the sandbox, passes each connection to the unix socket (a file the harness
// may read, which the test bridges to the model server on the same port of the machine's loopback),
// then runs the agent with its stdio and exits as it does. Nothing else reaches out: an unrelated
// port of the machine stays unreachable, which is what attack (9) tries. It imports nothing but Node.
import { spawn } from 'node:child_process';
import { connect, createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

function main(): void {
  const [socketPath, port, command, ...args] = process.argv.slice(2);
  if (socketPath === undefined || port === undefined || command === undefined) {
    process.stderr.write('usage: relay.mjs <unix socket> <port> <command> [args…]\n');
    process.exit(2);
  }
  const server = createServer((inbound) => {
    const outbound = connect(socketPath);
    inbound.pipe(outbound).pipe(inbound);
    inbound.on('error', () => outbound.destroy());
    outbound.on('error', () => inbound.destroy());
  });
  server.listen(Number(port), '127.0.0.1', () => {
    const agent = spawn(command, args, { stdio: 'inherit' });
    for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => agent.kill(signal));
    agent.on('error', (error) => {
      process.stderr.write(`relay: ${command}: ${error.message}\n`);
      process.exit(127);
    });
    agent.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
  });
}

if (process.argv[1] !== undefined && process.argv[1] === fileURLToPath(import.meta.url)) main();
