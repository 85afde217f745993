// A client process that performs one Effect through World W1's adapter and prints the receipt:
// `node perform-child.js URL ID_FILE REQUEST_ID OPERATION REFERENCE`. The adapter test SIGKILLs it
// between the intent and the answer, as a Host is killed.
import { providerEffectAdapter } from '../../workloads/world-w1/provider/index.js';

const [url, idFile, requestId, operation, reference] = process.argv.slice(2);
if (reference === undefined) throw new Error('usage: perform-child URL ID_FILE REQUEST_ID OPERATION REFERENCE');
const adapter = providerEffectAdapter({ url: url!, idFile: idFile!, timeoutMs: 600_000 });
const receipt = await adapter.perform(
  requestId!,
  { reference, amount: 5 },
  { operation: operation!, target: 'acct-1' },
);
process.stdout.write(JSON.stringify(receipt) + '\n');
