/** The stylesheet of report.html, inline: light, system fonts, one colour per verdict family. */
export const CSS = `
:root { --fg: #1d2329; --muted: #6a737d; --line: #d8dee4; --bg: #ffffff; --panel: #f6f8fa; --ok: #1f7a34; --bad: #b42323; --warn: #9a6700; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
header { padding: 16px 24px; border-bottom: 1px solid var(--line); background: var(--panel); }
header h1 { margin: 0; font-size: 20px; }
header p { margin: 4px 0 0; color: var(--muted); }
main { padding: 8px 24px 48px; max-width: 1400px; }
h2 { font-size: 17px; margin: 24px 0 8px; }
h2 small, h3 small, h4 small { color: var(--muted); font-weight: normal; font-size: 13px; }
h5 { margin: 14px 0 4px; font-size: 13px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
code, pre { font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre { margin: 4px 0; padding: 8px; background: var(--panel); border: 1px solid var(--line); border-radius: 4px; overflow: auto; max-height: 420px; white-space: pre-wrap; word-break: break-word; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; }
.card { flex: 1 1 340px; border: 1px solid var(--line); border-radius: 6px; padding: 12px 16px; background: var(--bg); }
.card h3 { margin: 0 0 8px; font-size: 16px; }
.card p { margin: 4px 0; }
.big { font-size: 18px; } .big b { font-size: 24px; } .big2 b { font-size: 16px; }
.big span, .big2 span { color: var(--muted); margin-left: 4px; }
.meta { color: var(--muted); font-size: 12px; }
.warn { color: var(--warn); }
.muted { color: var(--muted); font-style: italic; margin: 4px 0; }
.v { display: inline-block; padding: 0 7px; margin-right: 3px; border-radius: 10px; font-size: 12px; line-height: 18px; background: #fbe9e9; color: var(--bad); border: 1px solid #f1c4c4; white-space: nowrap; }
.v.ok { background: #e6f4ea; color: var(--ok); border-color: #b7dfc1; }
.v-infra_error, .v-invalid_fixture { background: #fff4d6; color: var(--warn); border-color: #f0dba0; }
.v-suspicious { background: #fff4d6; color: var(--warn); border-color: #f0dba0; font-weight: 600; }
.audit { margin: 4px 0; padding-left: 18px; }
.v-flaky, .v-timeout { background: #f3e8fd; color: #6f3fb0; border-color: #dcc6f5; }
.v.absent { background: none; border-color: transparent; color: var(--muted); }
.tools { margin: 6px 0; display: flex; gap: 12px; align-items: center; flex-wrap: wrap; }
.tools input[type=search] { padding: 4px 8px; width: 260px; border: 1px solid var(--line); border-radius: 4px; }
#shown { color: var(--muted); font-size: 12px; }
.matrix-wrap { max-height: 440px; overflow: auto; border: 1px solid var(--line); border-radius: 6px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
.matrix th { position: sticky; top: 0; background: var(--panel); z-index: 1; }
.matrix td a { color: var(--fg); text-decoration: none; font-family: ui-monospace, monospace; font-size: 12px; }
.matrix td a:hover { text-decoration: underline; }
.timeline { margin: 0 0 18px; }
.timeline figcaption { color: var(--muted); margin-bottom: 4px; }
.tl-plot { border: 1px solid var(--line); border-radius: 4px; background: #fbfcfd; }
.tl-svg { display: block; cursor: crosshair; }
.tl-lanes { fill: #eef1f4; }
.tl-sep { stroke: #fff; stroke-width: 1.5px; vector-effect: non-scaling-stroke; }
.tl-axis { position: relative; height: 18px; font-size: 11px; color: var(--muted); }
.tl-axis span { position: absolute; transform: translateX(-50%); white-space: nowrap; }
.tl-axis span:first-child { transform: none; }
.legend { display: flex; flex-wrap: wrap; gap: 12px; margin: 4px 0 10px; font-size: 12px; }
.legend i { display: inline-block; width: 12px; height: 12px; border-radius: 2px; margin-right: 4px; vertical-align: -2px; }
#tip { position: absolute; pointer-events: none; background: #1d2329; color: #fff; padding: 3px 8px; border-radius: 4px; font-size: 12px; z-index: 10; }
details.fx { border: 1px solid var(--line); border-radius: 6px; margin: 4px 0; }
details.fx > summary { cursor: pointer; padding: 6px 10px; list-style-position: inside; }
details.fx > summary b { font-family: ui-monospace, monospace; font-size: 13px; }
details.fx[open] > summary { background: var(--panel); border-bottom: 1px solid var(--line); }
.title { color: var(--muted); margin-left: 6px; }
.ms { float: right; color: var(--muted); font-size: 12px; }
.fx-body { padding: 0 14px 10px; }
.run { border-top: 1px dashed var(--line); padding-top: 6px; margin-top: 6px; }
.run:first-child { border-top: 0; }
.bar { display: flex; height: 8px; border-radius: 4px; overflow: hidden; margin: 6px 0; max-width: 600px; }
.bar i { display: block; min-width: 2px; }
.tests td { font-family: ui-monospace, monospace; font-size: 12px; }
.tests tr.changed { background: #fffbe6; }
.s-passed { color: var(--ok); } .s-failed, .s-error, .s-absent { color: var(--bad); } .s-skipped, .s-none { color: var(--muted); }
details.msg summary, details.log summary { cursor: pointer; color: var(--muted); font-size: 12px; }
details.log { margin: 4px 0; }
details.log summary code { color: var(--fg); }
.stream { color: var(--muted); font-size: 11px; margin-top: 4px; }
.diff .add { color: #116329; background: #e6ffec; } .diff .del { color: #82071e; background: #ffebe9; } .diff .hunk { color: #0550ae; } .diff .file { font-weight: bold; }
`;
