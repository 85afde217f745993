import { commandAgent } from './agents.js';
import { redTeamSuite } from './suite.js';

// The command driver: the attack program is the agent process itself.
redTeamSuite({ driver: 'command', makeAgent: commandAgent, concurrency: 12 });
