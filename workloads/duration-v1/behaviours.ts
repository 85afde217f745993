import { opencodeReplies, type ChatModelScriptIn } from '../scripted/chat-model.js';
import type { ResponsesStep } from '../scripted/responses-script.js';
import type { Workload } from '../../cli/workload.js';

/**
 * Scripted model turns for the duration-v1 workload, written as a user of the Host would script
 * an agent: per stage, what the agent's own tools do. They stand in for a model only; the agents
 * that run them (the real `codex app-server`, the real `opencode acp`) are real.
 */
export type DurationStage = 'investigate' | 'fix' | 'report';

export const FINDINGS = {
  failing: [
    { input: '250ms', expected: 250, error: 'SyntaxError: cannot read "s" in 250ms' },
    { input: '2h5m10s20ms', expected: 7_510_020, error: 'SyntaxError: cannot read "s" in 2h5m10s20ms' },
    { input: ' 1m500ms ', expected: 60_500, error: 'SyntaxError: cannot read "s" in  1m500ms ' },
  ],
  suspect: {
    file: 'src/duration.js',
    reason:
      'the unit alternation (h|m|s|ms) takes "m" before it can try "ms", so a millisecond part is read as minutes',
  },
};

/** The fix, as scripted/fix.patch records it: the unit alternation tries `ms` before `m`. */
const UNIT_ORDER_FIX = 's/(h|m|s|ms)/(ms|h|m|s)/';

export const NOTES =
  '# Milliseconds parse again\n\n`250ms` and friends were read as minutes followed by a stray `s`.\n';

export const REPORT = { status: 'fixed', filesChanged: ['src/duration.js'], testsPassed: 8 };

/** `sh -c` writing `text` to `name` (a heredoc keeps JSON and Markdown as they are). */
function writeFile(name: string, text: string): string[] {
  return ['sh', '-c', `cat > ${name} <<'ORDIVON_EOF'\n${text}\nORDIVON_EOF`];
}
const json = (value: unknown) => JSON.stringify(value, null, 2);

/** What the real `codex app-server` is scripted to do in each stage (its shell tool runs every step). */
export function durationCodexSteps(stage: DurationStage, workload: Workload): ResponsesStep[] {
  const usage = { input_tokens: 1500, output_tokens: 90 };
  if (stage === 'investigate')
    return [
      { type: 'shell', command: ['sh', '-c', 'node --test test/ 2>&1 | grep -E "^not ok|^# (pass|fail)"'], usage },
      { type: 'shell', command: ['sed', '-n', '6,12p', 'src/duration.js'], usage },
      { type: 'shell', command: writeFile('findings.json', json(FINDINGS)), usage },
      { type: 'message', text: 'Findings written to findings.json.', usage },
    ];
  if (stage === 'fix')
    return [
      { type: 'shell', command: ['sed', '-i', UNIT_ORDER_FIX, 'src/duration.js'], usage },
      { type: 'shell', command: writeFile('fix.patch', workload.file('scripted/fix.patch').trimEnd()), usage },
      { type: 'shell', command: writeFile('notes.md', NOTES.trimEnd()), usage },
      { type: 'message', text: 'Fixed; fix.patch and notes.md written.', usage },
    ];
  return [
    { type: 'shell', command: ['sh', '-c', 'node --test test/ 2>&1 | tail -n 8'], usage },
    { type: 'shell', command: writeFile('report.json', json(REPORT)), usage },
    { type: 'message', text: JSON.stringify({ status: 'fixed', artifact: 'report.json' }), usage },
  ];
}

/** What the real `opencode acp` is scripted to do in each stage, with its own `bash` tool (cwd: the workspace). */
export function durationOpencodeScript(stage: DurationStage, workload: Workload): ChatModelScriptIn {
  const { bash, done } = opencodeReplies({ prompt_tokens: 1100, completion_tokens: 70, total_tokens: 1170 });
  const write = (name: string, text: string) =>
    bash(`cat > ${name} <<'ORDIVON_EOF'\n${text}\nORDIVON_EOF`, `Write ${name}`);
  if (stage === 'investigate')
    return {
      turns: [
        bash('node --test test/ 2>&1 | grep -E "^not ok|^# (pass|fail)"', 'Run the tests'),
        write('findings.json', json(FINDINGS)),
        done('Findings are in findings.json.'),
      ],
    };
  if (stage === 'fix')
    return {
      turns: [
        bash(`sed -i '${UNIT_ORDER_FIX}' src/duration.js`, 'Try "ms" before "m"'),
        write('fix.patch', workload.file('scripted/fix.patch').trimEnd()),
        write('notes.md', NOTES.trimEnd()),
        done('Fixed the unit order; fix.patch and notes.md written.'),
      ],
    };
  return {
    turns: [
      bash('node --test test/ 2>&1 | tail -n 8', 'Run the acceptance tests'),
      write('report.json', json(REPORT)),
      done('All 8 tests pass; report.json written.'),
    ],
  };
}
