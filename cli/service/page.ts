import { PAGE_REQUESTS_SCRIPT } from './page-requests.js';
import { PAGE_SCRIPT } from './page-script.js';
import { PAGE_STORY_SCRIPT } from './page-story.js';

/**
 * The service's local page (`GET /`): one HTML document with its CSS and script inline, so the
 * browser requests nothing but this service's own JSON routes and SSE stream.
 */
export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Ordivon Host</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 0; display: grid; grid-template-columns: 300px 1fr; min-height: 100vh; color: #1d2330; }
  header { grid-column: 1 / 3; padding: 10px 16px; background: #1d2330; color: #fff; display: flex; gap: 12px; align-items: baseline; }
  header h1 { font-size: 16px; margin: 0; }
  #live { font-size: 12px; padding: 1px 8px; border-radius: 8px; background: #8a6; opacity: .5; }
  #live.on { opacity: 1; }
  nav { border-right: 1px solid #dde; padding: 8px; overflow: auto; }
  nav ul { list-style: none; padding: 0; margin: 0; }
  nav li { padding: 6px 8px; border-radius: 6px; margin-bottom: 4px; }
  nav li.sel { background: #eef2ff; }
  main { padding: 8px 20px; overflow: auto; }
  code { font-size: 12px; }
  .badge { font-size: 12px; background: #eef; padding: 0 6px; border-radius: 6px; }
  table { border-collapse: collapse; margin-bottom: 12px; }
  th, td { text-align: left; padding: 3px 10px 3px 0; border-bottom: 1px solid #eee; font-size: 13px; }
  tr.rejected td { color: #a12; }
  .chart { overflow: auto; border: 1px solid #eee; border-radius: 8px; padding: 4px; max-height: 420px; }
  svg .state rect { fill: #f5f6fa; stroke: #99a; stroke-width: 1; }
  svg .state.compound > rect { fill: #fbfbfe; stroke-dasharray: 4 3; }
  svg .state.final rect { stroke-width: 3; }
  svg .state.active > rect { stroke: #e07b00; stroke-width: 2; }
  svg .state.current rect { fill: #ffb347; stroke: #c25e00; stroke-width: 3; }
  svg text { font-size: 12px; text-anchor: middle; fill: #223; }
  svg .state.visited > rect { stroke: #2a7; stroke-width: 2; }
  svg .edge path { fill: none; stroke: #aab; stroke-width: 1; }
  svg .edge text.label { font-size: 11px; text-anchor: start; fill: #667; }
  svg .edge.path path { stroke: #1a8a4a; stroke-width: 3; }
  svg .edge.path text.label { fill: #116633; font-weight: 600; }
  pre { background: #f7f7fa; padding: 6px 8px; border-radius: 6px; overflow: auto; max-height: 420px; font-size: 12px; white-space: pre-wrap; }
  pre .add { color: #175; } pre .del { color: #a12; }
  ol.transcript { padding-left: 20px; } ol.transcript li { margin-bottom: 4px; }
  #inbox .inbox-item { border: 1px solid #dde; border-radius: 6px; padding: 6px; margin-bottom: 6px; font-size: 13px; }
  #inbox button, #cancel { margin: 4px 4px 0 0; }
  tr.total td { font-weight: 600; }
  .err { color: #a12; }
  table.context caption { text-align: left; font-weight: 600; padding: 4px 0; }
  td.trusted { color: #175; }
  td.untrusted { color: #a12; }
  tr.candidate td { background: #fafaff; }
</style>
</head>
<body>
<header><h1>Ordivon Host</h1><span id="live">connecting</span></header>
<nav><section id="inbox"></section><h3>Tasks</h3><ul id="tasks"></ul></nav>
<main id="task"><p>loading…</p></main>
<script>${PAGE_STORY_SCRIPT}${PAGE_SCRIPT}${PAGE_REQUESTS_SCRIPT}</script>
</body>
</html>
`;
