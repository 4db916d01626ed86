/**
 * The console's only style sheet, served by the console itself (its script is client.ts). Every page
 * fits a phone's width (390 px): long ids and paths wrap, tables become one card per row, and
 * what cannot shrink (a picture, a wide table a model wrote, the decision trail) scrolls inside its
 * own box, never the page. Text and status colours meet WCAG AA contrast (4.5:1) on their backgrounds.
 */
export const APP_CSS = `
:root { font: 15px/1.45 system-ui, sans-serif; color: #1d2330; background: #f6f7f9; }
body { margin: 0; }
header { display: flex; flex-wrap: wrap; gap: .4rem 1.5rem; align-items: center; padding: .6rem 1.2rem; background: #1d2330; color: #fff; }
header nav { display: flex; flex-wrap: wrap; gap: .2rem 1rem; }
header nav a { color: #dfe5ef; text-decoration: none; }
header nav a[aria-current] { color: #fff; border-bottom: 2px solid #7aa2ff; }
header .ws { margin-left: auto; color: #aeb8c8; font-size: .85rem; overflow-wrap: anywhere; }
header .who { color: #fff; } header .who button { margin-left: .4rem; }
main { padding: 1rem 1.4rem; max-width: 1200px; overflow-wrap: anywhere; }
a { color: #1f4fbf; }
h1, h2, code { overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #e3e6ec; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.badge { padding: .05rem .45rem; border-radius: .6rem; font-size: .8rem; background: #e3e6ec; color: #1d2330; white-space: nowrap; }
.s-completed { background: #d5f2dc; color: #0f4620; } .s-paused, .s-running, .s-interrupted, .s-continued { background: #fff0c2; color: #5c3d00; }
.s-stopped, .s-error, .s-invalid, .s-guardrail_stopped { background: #ffd9d6; color: #7a1109; }
.notice { padding: .5rem .8rem; border-radius: .3rem; } .notice.ok { background: #d5f2dc; } .notice.refused { background: #ffd9d6; }
.chain.ok, .integrity.ok { color: #17612e; } .chain.broken, .integrity.broken { color: #a3160b; font-weight: bold; }
section, article { margin: 1rem 0; } article.paused { background: #fff; padding: .5rem 1rem; border-radius: .4rem; }
.decide { background: #fffaf0; padding: .4rem 1rem; border-left: 4px solid #e0a800; } .decide.sealed { border-color: #a3160b; }
button { padding: .45rem .9rem; font: inherit; } button.stop { background: #ffd9d6; color: #5b0d07; } button.go { background: #d5f2dc; color: #0f4620; }
textarea, input[type=search], input[type=password] { width: 100%; box-sizing: border-box; font: inherit; }
textarea { font-family: ui-monospace, monospace; } label { display: block; margin: .4rem 0; }
form.inline { display: inline; } pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #eef0f4; padding: .4rem; }
.filter { display: flex; flex-wrap: wrap; gap: 0 1rem; align-items: end; } .filter label:first-child { flex: 1 1 16rem; }
.pager { display: flex; gap: 1rem; margin: .6rem 0; }
.radar { display: inline-block; background: #fff; padding: .5rem 1rem; border-radius: .4rem; margin: 0; max-width: 100%; box-sizing: border-box; }
.radar svg { max-width: 100%; height: auto; }
.radar figcaption { font-size: .8rem; color: #4a4a4a; max-width: 260px; }
.artifact p:has(> img), .artifact table, .audit details { display: block; overflow-x: auto; }
.artifact img { width: 560px; max-width: none; background: #fff; display: block; margin: .5rem 0; }
.live-run { background: #fff; padding: .5rem 1rem; margin: .6rem 0; border-radius: .4rem; }
.live-step { border-left: 3px solid #7aa2ff; padding-left: .6rem; margin: .4rem 0; }
.task-text { white-space: pre-wrap; background: #fff; border: 1px solid #d5d9e0; padding: .5rem; max-height: 16rem; overflow: auto; }
.choices dt { font-weight: bold; } .choices dd { margin: 0 0 .4rem 1rem; }
.council li { margin: .25rem 0; } .verdict { font-weight: bold; }
.stop-box { margin-top: .6rem; } .stop-box summary { cursor: pointer; color: #8a1c12; font-weight: bold; }
.next-pause, .kept-note, .decide-many, .decided-many { background: #eef3ff; padding: .4rem .8rem; border-radius: .3rem; }
.decided-many li.refused { color: #7a1109; }
.follow, .resume { background: #fff; padding: .4rem 1rem; border-left: 4px solid #2f5bd3; }
@media (max-width: 700px) {
  header, main { padding-left: .7rem; padding-right: .7rem; }
  header .ws { margin-left: 0; flex-basis: 100%; }
  table.runs thead { display: none; }
  table.runs tr { display: block; border-bottom: 2px solid #d5d9e0; padding: .3rem 0; }
  table.runs td { display: flex; gap: .6rem; border: 0; padding: .1rem .4rem; text-align: left; }
  table.runs td::before { content: attr(data-label); flex: 0 0 5rem; color: #4a5263; }
  .decide, article.paused { padding-left: .6rem; padding-right: .6rem; }
}
`;
