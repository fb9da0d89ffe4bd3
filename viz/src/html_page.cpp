#include "html_page.hpp"

#include <fmt/format.h>

namespace pipesim::viz::detail {

namespace {

// Everything is inline: the policy below makes the browser refuse any fetch at all.
constexpr std::string_view head_start = R"(<!DOCTYPE html>
<html lang="en" data-js-errors="0" data-js-error-text="">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<script>
(function () {
  var root = document.documentElement;
  function record(message) {
    root.setAttribute('data-js-errors', String(Number(root.getAttribute('data-js-errors')) + 1));
    root.setAttribute('data-js-error-text', root.getAttribute('data-js-error-text') + String(message) + '\n');
  }
  window.addEventListener('error', function (e) {
    record(e.message || ('cannot load ' + (e.target && (e.target.src || e.target.href || e.target.tagName))));
  }, true);
  window.addEventListener('unhandledrejection', function (e) { record('unhandled rejection: ' + e.reason); });
  document.addEventListener('securitypolicyviolation', function (e) { record('blocked ' + e.blockedURI); });
  var consoleError = console.error;
  console.error = function () {
    record(Array.prototype.join.call(arguments, ' '));
    return consoleError.apply(console, arguments);
  };
})();
</script>
<style>
:root { --ink: #222; --muted: #666; --line: #ddd; --band: #f6f7f9; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: var(--ink); background: #fff; }
header { padding: 14px 24px 6px; border-bottom: 1px solid var(--line); }
h1 { font-size: 20px; margin: 0 0 4px; overflow-wrap: anywhere; }
h2 { font-size: 16px; margin: 18px 0 8px; }
h3 { font-size: 15px; margin: 10px 0 4px; overflow-wrap: anywhere; }
h4 { font-size: 12px; font-weight: normal; color: var(--muted); margin: 6px 0 2px; }
main { padding: 0 24px 24px; }
#figures { overflow-x: auto; }
.wide { overflow-x: auto; max-width: 100%; }
.hint { color: var(--muted); font-size: 12px; margin: 0 0 6px; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { padding: 4px 10px; border-bottom: 1px solid var(--line); text-align: left; white-space: nowrap; }
td.num { text-align: right; }
td:first-child:not(.num) { white-space: normal; overflow-wrap: anywhere; min-width: 8em; max-width: 28em; }
td:last-child:not(.num):not(:first-child):not(:empty) { white-space: normal; min-width: 30em; max-width: 48em; }
th { background: var(--band); cursor: pointer; user-select: none; }
th[data-sorted="up"]::after { content: " \25B2"; font-size: 10px; }
th[data-sorted="down"]::after { content: " \25BC"; font-size: 10px; }
tbody tr:hover { background: #fffbe6; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 0; }
dt { color: var(--muted); }
dd { margin: 0; }
code { font: 12px ui-monospace, Menlo, Consolas, monospace; background: var(--band); padding: 1px 4px; overflow-wrap: anywhere; }
.toolbar { position: sticky; top: 0; z-index: 2; background: rgba(255,255,255,0.96); border-bottom: 1px solid var(--line); padding: 6px 0; display: flex; flex-wrap: wrap; gap: 6px 18px; align-items: center; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; font-size: 12px; }
.legend .entry { display: inline-flex; align-items: center; gap: 3px; }
.legend i, .devices i { display: inline-block; width: 14px; height: 11px; border: 0.5px solid #444; }
.legend i.critical { background: #fff; border: 2px solid #d62728; }
.legend i.transfer { border: none; height: 2px; background: #555; }
.legend i.curve { border: none; height: 2px; background: #1f77b4; }
.legend i.peak { border: none; width: 7px; height: 7px; border-radius: 50%; background: #1f77b4; }
.zoom { display: inline-flex; gap: 4px; align-items: center; font-size: 12px; color: var(--muted); }
.zoom button { font: inherit; color: var(--ink); padding: 2px 9px; border: 1px solid #bbb; background: #fff; border-radius: 3px; cursor: pointer; }
.zoom button:hover { background: var(--band); }
.schedule { border-top: 1px solid var(--line); padding-bottom: 6px; }
.viewport { overflow-x: auto; overflow-y: hidden; cursor: grab; }
.viewport.dragging { cursor: grabbing; }
.viewport svg { display: block; }
svg.memory polyline { fill: none; stroke-width: 1.2; }
svg.memory g.device:hover polyline { stroke-width: 2.6; }
svg.memory.rows polygon { fill-opacity: 0.3; stroke: none; }
svg.memory.rows g.device:hover polygon { fill-opacity: 0.6; }
svg.memory .grid { stroke: #e8e8e8; }
svg.memory .axis { stroke: #333; }
svg.memory text { font: 9px Helvetica, Arial, sans-serif; fill: #333; }
svg.bars { display: block; margin: 4px 0 10px; }
svg.bars text { font: 11px system-ui, Helvetica, Arial, sans-serif; fill: #333; }
svg.bars text.label { text-anchor: end; }
svg.bars text.share { text-anchor: middle; font-size: 10px; }
svg.memory text.title { font-size: 10px; }
.devices { font-size: 11px; color: var(--muted); margin: 2px 0 0; display: flex; flex-wrap: wrap; gap: 2px 10px; }
.devices span { display: inline-flex; align-items: center; gap: 3px; }
.devices i { height: 3px; border: none; }
#tip { position: fixed; z-index: 10; pointer-events: none; background: #222; color: #fff; font-size: 12px; padding: 4px 7px; border-radius: 3px; max-width: 420px; display: none; }
footer { color: var(--muted); font-size: 12px; padding: 10px 24px 20px; border-top: 1px solid var(--line); }
</style>
)";

constexpr std::string_view tail = R"(<div id="tip" role="tooltip"></div>
<footer>Written by pipesim: a self-contained page (no network access). Wheel with Ctrl or
the buttons zoom every timeline together; drag to pan; hover a box or a memory curve for its
details.</footer>
<script>
(function () {
  'use strict';
  var root = document.documentElement;
  var views = Array.prototype.slice.call(document.querySelectorAll('.viewport'));
  var pictures = [];
  views.forEach(function (view) {
    var svg = view.querySelector('svg');
    if (!svg) return;
    pictures.push({ svg: svg, width: parseFloat(svg.getAttribute('width')),
                    height: parseFloat(svg.getAttribute('height')) });
  });
  var zoom = 1;
  var widest = pictures.reduce(function (w, p) { return Math.max(w, p.width); }, 1);

  function setZoom(next, anchorView, anchorX) {
    next = Math.min(40, Math.max(0.05, next));
    var view = anchorView || views[0];
    var x = anchorX === undefined ? (view ? view.clientWidth / 2 : 0) : anchorX;
    var left = view ? (view.scrollLeft + x) * next / zoom - x : 0;
    zoom = next;
    pictures.forEach(function (p) {
      p.svg.setAttribute('width', (p.width * zoom).toFixed(2) + 'pt');
      p.svg.setAttribute('height', (p.height * zoom).toFixed(2) + 'pt');
    });
    views.forEach(function (v) { v.scrollLeft = left; });
    var shown = document.getElementById('zoom-level');
    if (shown) shown.textContent = Math.round(zoom * 100) + ' %';
  }
  function fit() {
    var room = views.length ? views[0].clientWidth : 800;
    setZoom(Math.min(1, room / (widest * 4 / 3)));
  }
  var buttons = { 'zoom-in': function () { setZoom(zoom * 1.5); },
                  'zoom-out': function () { setZoom(zoom / 1.5); },
                  'zoom-fit': fit,
                  'zoom-one': function () { setZoom(1); } };
  Object.keys(buttons).forEach(function (id) {
    var b = document.getElementById(id);
    if (b) b.addEventListener('click', buttons[id]);
  });

  // One time axis: scrolling one picture sideways scrolls them all.
  var syncing = false;
  views.forEach(function (view) {
    view.addEventListener('scroll', function () {
      if (syncing) return;
      syncing = true;
      views.forEach(function (v) { if (v !== view) v.scrollLeft = view.scrollLeft; });
      syncing = false;
    });
    view.addEventListener('wheel', function (e) {
      if (!e.ctrlKey) return;
      e.preventDefault();
      var box = view.getBoundingClientRect();
      setZoom(zoom * (e.deltaY < 0 ? 1.2 : 1 / 1.2), view, e.clientX - box.left);
    }, { passive: false });
    var drag = null;
    view.addEventListener('mousedown', function (e) {
      if (e.button !== 0) return;
      drag = { x: e.clientX, y: e.clientY, left: view.scrollLeft, top: view.scrollTop };
      view.classList.add('dragging');
      e.preventDefault();
    });
    window.addEventListener('mousemove', function (e) {
      if (!drag) return;
      view.scrollLeft = drag.left - (e.clientX - drag.x);
      view.scrollTop = drag.top - (e.clientY - drag.y);
    });
    window.addEventListener('mouseup', function () {
      drag = null;
      view.classList.remove('dragging');
    });
  });

  // Tooltips: Graphviz puts each box's text in its link's xlink:title, which the report moves
  // into data-tip as it embeds a box; other groups (edges) get theirs here. Show it at once,
  // in one place, instead of the browser's delayed native tooltip (and the node's name).
  Array.prototype.forEach.call(document.querySelectorAll('svg g.node, svg g.edge'), function (g) {
    var link = g.querySelector('a');
    var text = link && (link.getAttribute('xlink:title') || link.getAttribute('title'));
    if (text) {
      g.setAttribute('data-tip', text);
      link.removeAttribute('xlink:title');
    }
    var title = g.querySelector('title');
    if (title) title.parentNode.removeChild(title);
  });
  var tip = document.getElementById('tip');
  document.addEventListener('mousemove', function (e) {
    var target = e.target.closest ? e.target.closest('[data-tip]') : null;
    if (!target) { tip.style.display = 'none'; return; }
    tip.textContent = target.getAttribute('data-tip');
    tip.style.display = 'block';
    var x = e.clientX + 14, y = e.clientY + 14;
    if (x + tip.offsetWidth > window.innerWidth) x = e.clientX - tip.offsetWidth - 8;
    if (y + tip.offsetHeight > window.innerHeight) y = e.clientY - tip.offsetHeight - 8;
    tip.style.left = x + 'px';
    tip.style.top = y + 'px';
  });

  // Sortable table: numbers by value (a trailing %, x or unit is ignored), text otherwise.
  var table = document.getElementById('figures-table');
  if (table) {
    var heads = table.querySelectorAll('th');
    Array.prototype.forEach.call(heads, function (th, column) {
      th.addEventListener('click', function () {
        var up = th.getAttribute('data-sorted') !== 'up';
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute('data-sorted'); });
        th.setAttribute('data-sorted', up ? 'up' : 'down');
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        function key(row) {
          var cell = row.cells[column];
          var text = cell ? cell.textContent.trim() : '';
          var number = parseFloat(text);
          return isNaN(number) ? text : number;
        }
        rows.sort(function (a, b) {
          var x = key(a), y = key(b);
          var order = typeof x === 'number' && typeof y === 'number' ? x - y
                    : String(x).localeCompare(String(y));
          return up ? order : -order;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  }

  // Opens fitted to the window, unless that shrinks the pictures below 60 %, where a box's
  // label is under 6 px: then at full size, scrolled to the start (device labels in view;
  // 'fit' still shows the whole).
  var room = views.length ? views[0].clientWidth : 800;
  if (room / (widest * 4 / 3) >= 0.6) fit(); else setZoom(1);
  // A link may ask for a zoom level: report.html#zoom=2.
  var asked = /(?:^#|&)zoom=([0-9.]+)/.exec(location.hash);
  if (asked && parseFloat(asked[1]) > 0) setZoom(parseFloat(asked[1]));
  root.setAttribute('data-report', 'ready');
})();
</script>
</body>
</html>
)";

}  // namespace

std::string html_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&#39;";
                break;
            default:
                // Control bytes are not allowed in HTML text (nor in XML): U+FFFD instead.
                if (const auto byte = static_cast<unsigned char>(c);
                    (byte < 0x20 && c != '\n' && c != '\t') || byte == 0x7f)
                    out += "\xEF\xBF\xBD";
                else
                    out += c;
        }
    }
    return out;
}

std::string html_head(std::string_view title) {
    return fmt::format("{}<title>{}</title>\n</head>\n<body>\n", head_start, html_escape(title));
}

std::string zoom_controls() {
    return "<div class=\"zoom\"><button type=\"button\" id=\"zoom-out\" title=\"zoom out\">"
           "\u2212</button><span id=\"zoom-level\">100 %</span><button type=\"button\" "
           "id=\"zoom-in\" title=\"zoom in\">+</button><button type=\"button\" id=\"zoom-fit\">"
           "fit</button><button type=\"button\" id=\"zoom-one\">1:1</button>"
           "<span>Ctrl+wheel zooms, drag pans</span></div>";
}

std::string html_tail() {
    return std::string(tail);
}

}  // namespace pipesim::viz::detail
