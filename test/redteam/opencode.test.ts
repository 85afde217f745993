import { OPENCODE, opencodeAgent } from './agents.js';
import { CLIENT_FS_ATTACKS } from './attacks.js';
import { redTeamSuite } from './suite.js';

// The REAL opencode acp: its scripted loopback model asks its bash tool to run the attack; and, as
// only an ACP agent can, races the Host's own client file system (CLIENT_FS_ATTACKS).
redTeamSuite({
  driver: 'opencode',
  makeAgent: opencodeAgent,
  part: OPENCODE,
  concurrency: 7,
  extra: CLIENT_FS_ATTACKS,
});
