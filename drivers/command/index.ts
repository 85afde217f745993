export {
  runCommand,
  STDOUT_TAIL_BYTES,
  STDERR_TAIL_BYTES,
  FINAL_TEXT_MAX_CHARS,
  PROVIDER_NAME_ENV,
} from './command-driver.js';
export { OutputTail } from './output-tail.js';
export { COMMAND_FAILURE_CODES, type CommandFailureCode } from './errors.js';
