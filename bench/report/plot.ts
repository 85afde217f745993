/** A hand-written SVG line chart (log–log), no dependencies: recovery time against history length. */

export interface Series {
  name: string;
  color: string;
  dashed?: boolean;
  points: Array<{ x: number; y: number }>;
}

const W = 760;
const H = 460;
const M = { left: 78, right: 250, top: 46, bottom: 62 };

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function decades(min: number, max: number): number[] {
  const out: number[] = [];
  for (let e = Math.floor(Math.log10(min)); e <= Math.ceil(Math.log10(max)); e++) out.push(10 ** e);
  return out;
}

function label(value: number, unit: 'events' | 's'): string {
  if (unit === 's') return value >= 1 ? `${value} s` : `${value * 1000} ms`;
  return value >= 1_000_000 ? `${value / 1_000_000}M` : value >= 1_000 ? `${value / 1_000}k` : String(value);
}

/** Renders the series as an SVG document; x in events, y in seconds, both on log scales. */
export function recoveryPlot(title: string, subtitle: string, series: Series[]): string {
  const points = series.flatMap((s) => s.points).filter((p) => p.x > 0 && p.y > 0);
  if (points.length === 0)
    return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="80"><text x="10" y="40">no data</text></svg>\n`;
  const xs = decades(Math.min(...points.map((p) => p.x)), Math.max(...points.map((p) => p.x)));
  const ys = decades(Math.min(...points.map((p) => p.y)), Math.max(...points.map((p) => p.y)));
  const [x0, x1] = [Math.log10(xs[0]!), Math.log10(xs.at(-1)!)];
  const [y0, y1] = [Math.log10(ys[0]!), Math.log10(ys.at(-1)!)];
  const px = (x: number) => M.left + ((Math.log10(x) - x0) / Math.max(x1 - x0, 1e-9)) * (W - M.left - M.right);
  const py = (y: number) => H - M.bottom - ((Math.log10(y) - y0) / Math.max(y1 - y0, 1e-9)) * (H - M.top - M.bottom);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<text x="${M.left}" y="22" font-size="15" font-weight="bold">${escape(title)}</text>`,
    `<text x="${M.left}" y="38" fill="#555">${escape(subtitle)}</text>`,
  ];
  for (const x of xs) {
    out.push(`<line x1="${px(x)}" y1="${M.top}" x2="${px(x)}" y2="${H - M.bottom}" stroke="#e3e3e3"/>`);
    out.push(`<text x="${px(x)}" y="${H - M.bottom + 18}" text-anchor="middle">${label(x, 'events')}</text>`);
  }
  for (const y of ys) {
    out.push(`<line x1="${M.left}" y1="${py(y)}" x2="${W - M.right}" y2="${py(y)}" stroke="#e3e3e3"/>`);
    out.push(`<text x="${M.left - 8}" y="${py(y) + 4}" text-anchor="end">${label(y, 's')}</text>`);
  }
  out.push(
    `<rect x="${M.left}" y="${M.top}" width="${W - M.left - M.right}" height="${H - M.top - M.bottom}" fill="none" stroke="#999"/>`,
  );
  out.push(
    `<text x="${(M.left + W - M.right) / 2}" y="${H - 18}" text-anchor="middle">history length (events, log scale)</text>`,
  );
  out.push(
    `<text transform="translate(20 ${(M.top + H - M.bottom) / 2}) rotate(-90)" text-anchor="middle">time to recover (log scale)</text>`,
  );
  series.forEach((s, i) => {
    const pts = s.points.filter((p) => p.x > 0 && p.y > 0).sort((a, b) => a.x - b.x);
    if (pts.length === 0) return;
    const dash = s.dashed ? ' stroke-dasharray="6 4"' : '';
    out.push(
      `<polyline fill="none" stroke="${s.color}" stroke-width="2.2"${dash} points="${pts.map((p) => `${px(p.x).toFixed(1)},${py(p.y).toFixed(1)}`).join(' ')}"/>`,
    );
    for (const p of pts)
      out.push(
        `<circle cx="${px(p.x).toFixed(1)}" cy="${py(p.y).toFixed(1)}" r="3.5" fill="${s.color}"><title>${escape(`${s.name}: ${label(p.x, 'events')} events, ${p.y.toFixed(3)} s`)}</title></circle>`,
      );
    const ly = M.top + 14 + i * 22;
    const lx = W - M.right + 16;
    out.push(
      `<line x1="${lx}" y1="${ly - 4}" x2="${lx + 26}" y2="${ly - 4}" stroke="${s.color}" stroke-width="2.2"${dash}/>`,
    );
    out.push(`<text x="${lx + 32}" y="${ly}">${escape(s.name)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}
