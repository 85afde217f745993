import { CODEX, codexAgent } from './agents.js';
import { redTeamSuite } from './suite.js';

// The REAL codex app-server: its scripted loopback model asks its shell tool to run the attack.
redTeamSuite({ driver: 'codex', makeAgent: codexAgent, part: CODEX, concurrency: 6 });
