"""The HTML report's style and its one script, inline in every page (nothing is fetched at view time).

The script copies a reproduce command, and opens the folded blocks (``<details>``) an in-page link points
into before the browser scrolls to it (on a click, and for the address's ``#id`` when the page opens).
"""

__all__ = ["STYLE", "SCRIPT", "CSP"]

STYLE = """
:root { --fg:#1d2330; --muted:#5b6475; --line:#d9dde5; --bg:#fff; --soft:#f5f7fa; --bad:#c0392b; --ok:#2e7d32;
        --warn:#a66300; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
body { margin:0; color:var(--fg); background:var(--bg); line-height:1.45; }
main { max-width:1100px; margin:0 auto; padding:16px; }
h1 { font-size:1.35rem; margin:.2em 0 .6em; } h2 { font-size:1.15rem; margin:1.6em 0 .5em; }
h3 { font-size:1rem; margin:1.2em 0 .4em; }
.summary { display:grid; grid-template-columns:repeat(auto-fit, minmax(150px, 1fr)); gap:8px; margin:0; }
.summary div { background:var(--soft); border-radius:6px; padding:6px 10px; }
.summary div.wide { grid-column:span 2; }
.summary dt { font-size:.75rem; color:var(--muted); } .summary dd { margin:0; font-weight:600; word-break:break-word; }
.status-1, .status-3 { color:var(--bad); } .status-0 { color:var(--ok); } .status-4, .status-2 { color:var(--warn); }
.failure { border:1px solid var(--line); border-left:4px solid var(--bad); border-radius:6px; padding:8px 14px;
           margin:14px 0; }
.failure h3 { margin-top:.4em; } .muted { color:var(--muted); font-size:.9rem; }
.turns { list-style:none; padding:0; margin:.4em 0; }
.turns li { padding:4px 8px; border-radius:4px; margin:2px 0; background:var(--soft); overflow-wrap:anywhere; }
.turns li.stated { background:#fff4d6; outline:1px solid #e7c35a; }
.turns li.elided { background:none; color:var(--muted); font-style:italic; }
.role { display:inline-block; min-width:7.5em; color:var(--muted); font-size:.8rem; }
mark.obligation { background:#ffd54f; padding:0 2px; border-radius:2px; }
mark.kept { background:#c8e6c9; } mark.bent { background:#ffcdd2; outline:1px solid var(--bad); }
mark.evidence { background:#ffcdd2; }
.context { white-space:pre-wrap; background:var(--soft); border-radius:4px; padding:8px; overflow-wrap:anywhere; margin:.3em 0; }
.lost { color:var(--bad); font-weight:600; }
.evidence-table { border-collapse:collapse; margin:.4em 0; width:100%; }
.evidence-table th { text-align:left; color:var(--muted); font-weight:normal; width:7em; vertical-align:top; }
.evidence-table td { overflow-wrap:anywhere; }
.reproduce { display:flex; gap:8px; align-items:flex-start; }
.reproduce pre { flex:1; margin:0; background:#1d2330; color:#f0f3f8; padding:8px; border-radius:4px;
                 white-space:pre-wrap; overflow-wrap:anywhere; font-size:.85rem; }
button.copy { padding:6px 12px; border:1px solid var(--line); background:#fff; border-radius:4px; cursor:pointer; }
.chart { max-width:900px; } svg.survival { width:100%; height:auto; }
svg .grid { stroke:#e6e9ef; } svg .axis { font-size:11px; fill:var(--muted); }
svg .threshold { stroke:var(--bad); stroke-dasharray:5 4; } svg .threshold-label { font-size:11px; fill:var(--bad); }
svg .curve { fill:none; stroke-width:2; } svg .cliff { fill:none; stroke-width:2.5; }
.legend { list-style:none; padding:0; display:flex; flex-wrap:wrap; gap:4px 16px; font-size:.9rem; }
.swatch { display:inline-block; width:14px; height:4px; vertical-align:middle; margin-right:6px; }
.scroll { overflow-x:auto; } table.numbers { border-collapse:collapse; font-size:.8rem; }
table.numbers th, table.numbers td { border:1px solid var(--line); padding:2px 6px; text-align:right; white-space:nowrap; }
table.numbers th:first-child { text-align:left; } td.below { background:#ffebee; }
table.diff { border-collapse:collapse; width:100%; font-size:.9rem; }
table.diff th, table.diff td { border-bottom:1px solid var(--line); padding:4px 6px; text-align:left; }
.new { color:var(--bad); font-weight:600; } .fixed { color:var(--ok); font-weight:600; }
.side-by-side { display:grid; grid-template-columns:repeat(auto-fit, minmax(320px, 1fr)); gap:16px; }
.notice { border-left:4px solid var(--warn); background:#fff8e6; padding:6px 10px; margin:6px 0; overflow-wrap:anywhere; }
.notice pre { white-space:pre-wrap; margin:.3em 0 0; font-size:.8rem; }
details.fold { margin:.4em 0; } details > summary { cursor:pointer; color:var(--muted); font-size:.9rem; }
details.fold > summary { padding:3px 0; } details.fold[open] > summary { margin-bottom:.3em; }
details.run > summary { font-weight:600; padding:6px 0; color:var(--fg); }
.toc { font-size:.85rem; margin:.6em 0; } .back { margin:.4em 0 0; font-size:.85rem; text-align:right; }
.corpus { font-size:.9rem; overflow-wrap:anywhere; } table.index td { vertical-align:top; }
table.index td:last-child { overflow-wrap:anywhere; font-size:.85rem; }
.kind-charts { max-width:none; display:grid; grid-template-columns:repeat(auto-fill, minmax(250px, 1fr));
               gap:8px 16px; }
.kind-chart { margin:0; } .kind-chart figcaption { font-size:.85rem; }
svg.small .axis, svg.small .threshold-label { font-size:10px; }
svg .pooled { fill:#f3f4f8; } svg .point.few { opacity:.35; }
.trend { border:1px solid var(--line); border-radius:6px; padding:4px 14px 10px; margin:10px 0 18px; }
.trend h2 { margin-top:.6em; } .trend h3 { margin-bottom:.2em; }
h1, h2, h3, .trend p { overflow-wrap:anywhere; }
:target { scroll-margin-top:8px; } article.failure:target { box-shadow:0 0 0 3px #f5c6c0; }
"""


SCRIPT = """
function reveal(id) {
  var target = id && document.getElementById(id);
  for (var at = target; at; at = at.parentElement) if (at.tagName === 'DETAILS') at.open = true;
  return target;
}
function revealHash() {
  var target = reveal(decodeURIComponent(location.hash.slice(1)));
  if (target) target.scrollIntoView();
}
window.addEventListener('hashchange', revealHash);
if (location.hash) revealHash();
document.addEventListener('click', function (event) {
  var link = event.target.closest('a[href^="#"]');
  if (link) { reveal(decodeURIComponent(link.getAttribute('href').slice(1))); return; }
  var button = event.target.closest('button.copy');
  if (!button) return;
  var text = button.getAttribute('data-copy');
  function done() { button.textContent = 'Copied'; setTimeout(function () { button.textContent = 'Copy'; }, 2000); }
  function fallback() {
    var area = document.createElement('textarea');
    area.value = text; area.style.position = 'fixed'; area.style.opacity = '0';
    document.body.appendChild(area); area.select();
    try { document.execCommand('copy'); done(); } catch (e) { button.textContent = 'Select and copy'; }
    area.remove();
  }
  if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(done, fallback);
  else fallback();
});
"""


# Nothing may be fetched: styles and the script are inline, images would be data: URLs.
CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"

