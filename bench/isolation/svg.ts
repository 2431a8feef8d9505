/**
 * The arms' latency distributions as one SVG: HdrHistogram's percentile spectrum, latency (log) against
 * "1 in N" (log of 1/(1-q)), so the tail, where isolation matters, gets most of the width.
 */
import { spectrum } from './histogram.js';
import type { Report } from './report.js';
import { fmtNs } from './report.js';

const W = 760;
const H = 420;
const M = { left: 70, right: 20, top: 40, bottom: 60 };
const COLORS: Record<string, string> = {
  alone: '#1b9e77',
  unisolated: '#d95f02',
  isolated: '#7570b3',
  strict: '#e7298a',
};
const MAX_NINES = 5;

const half = (v: number) => String(Math.round(v * 2) / 2);

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** x in "nines": 0 at the median's left edge (q=0), 2 at p99, 3 at p99.9; the max sits at 1/count. */
function nines(q: number, count: number): number {
  const tail = Math.max(1 - q, 1 / count);
  return Math.min(MAX_NINES, -Math.log10(tail));
}

export function renderSvg(r: Report): string {
  const arms = r.arms.filter((a) => a.histogram && a.percentiles);
  const all = arms.flatMap((a) => spectrum(a.histogram!).map((p) => p.ns)).filter((v) => v > 0);
  const lo = all.length ? 10 ** Math.floor(Math.log10(Math.min(...all))) : 1e4;
  const hi = all.length ? 10 ** Math.ceil(Math.log10(Math.max(...all))) : 1e7;
  const maxX = Math.max(3, ...arms.map((a) => Math.ceil(nines(1, a.percentiles!.count))));
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  const x = (n: number) => M.left + (n / maxX) * pw;
  const y = (ns: number) =>
    M.top + ph - ((Math.log10(Math.max(ns, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * ph;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
  );
  const title = `Request latency by percentile${r.where.emulated ? ' — TCG emulation: noise, not a measurement' : ''}`;
  out.push(`<title>${esc(`${r.title}: ${title}`)}</title>`);
  out.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  out.push(`<text x="${W / 2}" y="20" text-anchor="middle" font-size="14">${esc(title)}</text>`);
  for (let n = 0; n <= maxX; n++) {
    const label = n === 0 ? '0%' : `${(100 - 100 / 10 ** n).toFixed(Math.max(0, n - 2))}%`;
    out.push(
      `<line x1="${x(n)}" y1="${M.top}" x2="${x(n)}" y2="${M.top + ph}" stroke="#ddd"/>`,
      `<text x="${x(n)}" y="${M.top + ph + 16}" text-anchor="middle">${label}</text>`,
    );
  }
  for (let v = lo; v <= hi * 1.0001; v *= 10) {
    out.push(
      `<line x1="${M.left}" y1="${y(v)}" x2="${M.left + pw}" y2="${y(v)}" stroke="#ddd"/>`,
      `<text x="${M.left - 6}" y="${y(v) + 4}" text-anchor="end">${esc(fmtNs(v))}</text>`,
    );
  }
  out.push(
    `<text x="${M.left + pw / 2}" y="${H - 24}" text-anchor="middle">percentile (log scale of 1/(1−q))</text>`,
  );
  out.push(
    `<text x="16" y="${M.top + ph / 2}" text-anchor="middle" transform="rotate(-90 16 ${M.top + ph / 2})">latency</text>`,
  );
  arms.forEach((a, i) => {
    const pts = spectrum(a.histogram!);
    const count = a.percentiles!.count;
    // A step line: each bucket's value holds from the previous quantile up to its own.
    let prevQ = 0;
    const d: string[] = [];
    const to = (px: number, py: number) => {
      const pt = `${half(px)},${half(py)}`;
      // Thousands of buckets land on the same pixel; the plot only needs each distinct point.
      if (d.at(-1)?.slice(1) !== pt) d.push(`${d.length ? 'L' : 'M'}${pt}`);
    };
    for (const p of pts) {
      to(x(nines(prevQ, count)), y(p.ns));
      to(x(nines(p.q, count)), y(p.ns));
      prevQ = p.q;
    }
    const color = COLORS[a.name] ?? '#333';
    out.push(
      `<path d="${d.join(' ')}" fill="none" stroke="${color}" stroke-width="2" data-arm="${a.name}"/>`,
    );
    const ly = M.top + 14 + i * 16;
    const ratio = a.ratioToAlone ? ` — p99 ${a.ratioToAlone.p99.toFixed(2)}× alone` : '';
    out.push(
      `<line x1="${M.left + 10}" y1="${ly - 4}" x2="${M.left + 30}" y2="${ly - 4}" stroke="${color}" stroke-width="2"/>`,
      `<text x="${M.left + 36}" y="${ly}">${esc(`${a.label}${ratio}`)}</text>`,
    );
  });
  out.push(`<rect x="${M.left}" y="${M.top}" width="${pw}" height="${ph}" fill="none" stroke="#888"/>`);
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
