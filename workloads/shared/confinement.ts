import { probeSandbox } from '../../os/index.js';

let said = false;

/**
 * The confinement the demo's Hosts run with: bubblewrap where this machine can make a sandbox,
 * else `none`, said once through `say` with what is missing. The demo's agents are its own
 * scripted ones, so it still runs on a machine without bubblewrap (`npm start` on a fresh clone);
 * a Host of one's own refuses to, unless its configuration says `none` (docs/threat-model.md).
 */
export function demoConfinement(say?: (text: string) => void): 'bwrap' | 'none' {
  const probe = probeSandbox();
  if (probe.ok) return 'bwrap';
  if (!said && say !== undefined) {
    said = true;
    say(`confinement: none (the demo's scripted agents run unconfined): ${probe.detail}`);
  }
  return 'none';
}
