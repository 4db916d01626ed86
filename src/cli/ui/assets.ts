/** The console's only style sheet, served by the console itself (its script is client.ts). */
export const APP_CSS = `
:root { font: 15px/1.45 system-ui, sans-serif; color: #1d2330; background: #f6f7f9; }
header { display: flex; gap: 1.5rem; align-items: center; padding: .6rem 1.2rem; background: #1d2330; color: #fff; }
header nav a { color: #cfd6e4; margin-right: 1rem; text-decoration: none; }
header nav a[aria-current] { color: #fff; border-bottom: 2px solid #7aa2ff; }
header .ws { margin-left: auto; color: #8b95a8; font-size: .85rem; }
main { padding: 1rem 1.4rem; max-width: 1200px; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #e3e6ec; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.badge { padding: .05rem .45rem; border-radius: .6rem; font-size: .8rem; background: #e3e6ec; }
.s-completed { background: #d5f2dc; } .s-paused, .s-running, .s-interrupted { background: #fff0c2; }
.s-stopped, .s-error, .s-invalid, .s-guardrail_stopped { background: #ffd9d6; }
.notice { padding: .5rem .8rem; border-radius: .3rem; } .notice.ok { background: #d5f2dc; } .notice.refused { background: #ffd9d6; }
.chain.ok { color: #17612e; } .chain.broken { color: #a3160b; font-weight: bold; }
section, article { margin: 1rem 0; } article.paused { background: #fff; padding: .5rem 1rem; border-radius: .4rem; }
.decide { background: #fffaf0; padding: .4rem 1rem; border-left: 4px solid #e0a800; } .decide.sealed { border-color: #a3160b; }
button { padding: .3rem .9rem; } button.stop { background: #ffd9d6; }
textarea { width: 100%; font-family: ui-monospace, monospace; } label { display: block; margin: .4rem 0; }
form.inline { display: inline; } pre { white-space: pre-wrap; background: #eef0f4; padding: .4rem; }
.radar { display: inline-block; background: #fff; padding: .5rem 1rem; border-radius: .4rem; margin: 0; }
.radar figcaption { font-size: .8rem; color: #555; max-width: 260px; }
.artifact img { max-width: 560px; background: #fff; display: block; margin: .5rem 0; }
.live-run { background: #fff; padding: .5rem 1rem; margin: .6rem 0; border-radius: .4rem; }
.live-step { border-left: 3px solid #7aa2ff; padding-left: .6rem; margin: .4rem 0; white-space: pre-wrap; }
.task-text { white-space: pre-wrap; background: #fff; border: 1px solid #d5d9e0; padding: .5rem; max-height: 16rem; overflow: auto; }
.choices dt { font-weight: bold; } .choices dd { margin: 0 0 .4rem 1rem; }
.council li { margin: .25rem 0; } .verdict { font-weight: bold; }
.stop-box { margin-top: .6rem; } .stop-box summary { cursor: pointer; color: #8a1c12; font-weight: bold; }
.next-pause, .kept-note { background: #eef3ff; padding: .4rem .8rem; border-radius: .3rem; }
.follow, .resume { background: #fff; padding: .4rem 1rem; border-left: 4px solid #2f5bd3; }
`;
