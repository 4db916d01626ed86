import { assessmentVerdict, parseAssessment } from '../../domain/assessment.js';
import type { RunState } from '../../domain/run-state.js';
import { parseVerdict, type Verdict } from '../../domain/verdict.js';
import { html, type SafeHtml } from './html.js';

/** Each action's colour on the radar (an unreadable verdict counts as escalate, and is drawn hollow). */
const ACTION_COLOUR: Readonly<Record<string, string>> = { proceed: '#2e8b57', investigate: '#9a6a00', escalate: '#c0392b' };
const SIZE = 260;
const CENTRE = SIZE / 2;
const RADIUS = 95;

function point(i: number, n: number, r: number): [number, number] {
  const angle = -Math.PI / 2 + (2 * Math.PI * i) / n;
  return [CENTRE + r * Math.cos(angle), CENTRE + r * Math.sin(angle)];
}

/** The verdicts, or where the mode asks for assessments instead (parallel, adaptive, …) each persona's last one as its verdict. */
function verdictsOf(state: RunState): Verdict[] {
  const verdicts = state.steps.filter((s) => s.kind === 'verdict').map((s) => parseVerdict(s.persona, s.reply));
  if (verdicts.length > 0) return verdicts;
  const last = new Map(state.steps.filter((s) => s.kind === 'assessment').map((s) => [s.persona, s]));
  return [...last.values()].map((s) => assessmentVerdict(parseAssessment(s.persona, s.reply)));
}

/**
 * The council's verdicts as a radar drawn in the page (SVG, no script): one axis per persona, its
 * confidence as the distance from the centre, its action as the colour. Nothing when fewer than
 * three personas gave a verdict (a radar needs three axes).
 */
export function verdictRadar(state: RunState): SafeHtml {
  const verdicts = verdictsOf(state);
  const n = verdicts.length;
  if (n < 3) return html``;
  const rings = [0.25, 0.5, 0.75, 1].map((f) => {
    const pts = verdicts.map((_, i) => point(i, n, RADIUS * f).join(',')).join(' ');
    return html`<polygon points="${pts}" fill="none" stroke="#d5d9e0"/>`;
  });
  const axes = verdicts.map((v, i) => {
    const [x, y] = point(i, n, RADIUS);
    const [lx, ly] = point(i, n, RADIUS + 18);
    return html`<line x1="${CENTRE}" y1="${CENTRE}" x2="${x}" y2="${y}" stroke="#d5d9e0"/>
<text x="${lx}" y="${ly}" text-anchor="middle" dominant-baseline="middle" font-size="11">${v.persona}</text>`;
  });
  const shape = verdicts.map((v, i) => point(i, n, RADIUS * v.confidence).join(',')).join(' ');
  const dots = verdicts.map((v, i) => {
    const [x, y] = point(i, n, RADIUS * v.confidence);
    const colour = ACTION_COLOUR[v.valid ? v.action : 'escalate'] ?? '#555';
    return html`<circle cx="${x}" cy="${y}" r="5" fill="${v.valid ? colour : 'none'}" stroke="${colour}" stroke-width="2">
<title>${v.persona}: ${v.valid ? v.action : 'unreadable (counts as escalate)'}, confidence ${v.confidence.toFixed(2)}</title></circle>`;
  });
  const label = `Verdict radar: ${verdicts.map((v) => `${v.persona} ${v.valid ? v.action : 'unreadable'} ${v.confidence.toFixed(2)}`).join('; ')}`;
  return html`<figure class="radar"><svg viewBox="0 0 ${SIZE} ${SIZE}" width="${SIZE}" height="${SIZE}" role="img" aria-label="${label}">
${rings}${axes}<polygon points="${shape}" fill="#7aa2ff44" stroke="#4a6fd1"/>${dots}</svg>
<figcaption>The verdicts: confidence from the centre out; green proceed, amber investigate, red escalate (hollow: unreadable).</figcaption>
</figure>`;
}
