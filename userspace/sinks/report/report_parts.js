// SPDX-License-Identifier: Apache-2.0
// What every part of the HTML report's script draws with: the page's data (#data) and its
// names for phases, causes and states, elements built with createElement/textContent (never
// from markup), counts and axis labels, the tooltip and what it says of a call. report.js takes
// them from `wpReportParts` and draws the charts.
var wpReportParts = (function () {
'use strict';

// ---- building blocks ----------------------------------------------------------------------
var SVGNS = 'http://www.w3.org/2000/svg';

// An HTML element; children are nodes or strings (strings become text, never markup).
function h(tag, attrs) {
  var e = document.createElement(tag);
  for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
  for (var i = 2; i < arguments.length; i++) {
    var c = arguments[i];
    if (c === null || c === undefined) continue;
    e.append(c);
  }
  return e;
}

function s(tag, attrs, parent) {
  var e = document.createElementNS(SVGNS, tag);
  for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(e);
  return e;
}

function stext(parent, x, y, text, attrs) {
  var t = s('text', Object.assign({x: x, y: y}, attrs || {}), parent);
  t.textContent = text;
  return t;
}

function fmtCount(n) { return Number(n).toLocaleString('en-US'); }

function plural(n, one, many) { return fmtCount(n) + ' ' + (Number(n) === 1 ? one : many); }

// The hint above a chart of the slowest calls: what a bar is, and how many were left out.
function slowestFirstHint(what, count, drawn, split) {
  return what + ', slowest first' +
      (count > drawn ? ' (the ' + drawn + ' slowest of ' + fmtCount(count) + ' drawn)' : '') +
      '; the bar is the call\'s latency, ' + split + '.';
}

function pct(part, whole) { return whole > 0 ? (100 * part / whole).toFixed(0) + '%' : '–'; }

// Tick values between a and b, about `count` of them, on a 1-2-5 grid.
function niceTicks(a, b, count) {
  var raw = (b - a) / Math.max(1, count);
  var mag = Math.pow(10, Math.floor(Math.log10(raw)));
  var step = [1, 2, 5, 10].map(function (m) { return m * mag; })
                          .find(function (st) { return st >= raw; });
  var ticks = [];
  for (var t = Math.ceil(a / step) * step; t <= b + step * 1e-9; t += step) ticks.push(t);
  return {ticks: ticks, step: step};
}

// An axis's time label: every label of one axis in one unit (that of its largest value), with
// as many decimals as its step needs, so the ticks line up ("0.5ms 1.0ms 1.5ms"). The axis is
// redrawn as the reader zooms, so this is the one duration the page formats itself; it spells
// its units as the labels from writepath do.
function axisLabel(ns, step, largest) {
  var unit = largest >= 1e9 ? [1e9, 's'] : largest >= 1e6 ? [1e6, 'ms'] :
             largest >= 1e3 ? [1e3, 'us'] : [1, 'ns'];
  var decimals = Math.min(6, Math.max(0, Math.ceil(Math.log10(unit[0] / step) - 1e-9)));
  return (ns / unit[0]).toFixed(decimals) + unit[1];
}

function truncate(text, max) {
  text = String(text);
  return text.length > max ? text.slice(0, max - 1) + '…' : text;
}

// ---- tooltip --------------------------------------------------------------------------------
var tooltip = document.getElementById('tooltip');
var tips = new WeakMap();
var tipShown = null;

// `describe` returns {title, rows: [[label, value], …]}; built only when hovered.
function tip(elem, describe) {
  tips.set(elem, describe);
  elem.classList.add('has-tip');
}

document.addEventListener('mousemove', function (e) {
  var t = e.target;
  while (t && t !== document && !tips.has(t)) t = t.parentNode;
  if (!t || t === document) { tooltip.hidden = true; tipShown = null; return; }
  if (t !== tipShown) {
    tipShown = t;
    var d = tips.get(t)();
    tooltip.replaceChildren(h('div', {class: 'title'}, d.title));
    var table = h('table');
    d.rows.forEach(function (r) {
      if (r[1] === null || r[1] === undefined || r[1] === '') return;
      table.append(h('tr', {}, h('td', {}, r[0]), h('td', {}, String(r[1]))));
    });
    tooltip.append(table);
  }
  tooltip.hidden = false;
  var x = e.clientX + 14, y = e.clientY + 14;
  var w = tooltip.offsetWidth, ht = tooltip.offsetHeight;
  if (x + w > window.innerWidth - 4) x = Math.max(4, e.clientX - w - 14);
  if (y + ht > window.innerHeight - 4) y = Math.max(4, e.clientY - ht - 14);
  tooltip.style.left = x + 'px';
  tooltip.style.top = y + 'px';
});

// ---- the data -------------------------------------------------------------------------------
var data = JSON.parse(document.getElementById('data').textContent);
var summary = data.summary || {};
// Times on the page are since the first traced call; its labels (`start`, `durable`, `at`) are.
var origin = Number(data.first_start_ns) || 0;
var pageLabels = data.labels || {};

// [key, title, what the time went to] per phase, in report order: the sink writes the table.
var PHASES = data.phases || [];
var CAUSES = [
  ['on_cpu', 'On CPU', 'running: copying data, filesystem code'],
  ['throttled', 'Throttled', 'put to sleep by dirty throttling (too much memory dirty)'],
  ['writeback_wait', 'Writeback wait', 'asleep until a page under writeback was written'],
  ['blocked', 'Blocked', 'asleep for anything else: locks, the journal, I/O'],
  ['runnable', 'Runnable', 'ready to run, waiting for a CPU']];
var STATES = [
  ['durable', 'durable: on stable storage'],
  ['written', 'written: on the device, maybe only in its cache'],
  ['dirty', 'dirty: only in memory'],
  ['discarded', 'discarded: dropped from the cache unwritten (truncate, unlink)'],
  ['memory', 'memory: a memory file system (tmpfs), never on a disk'],
  ['lost', 'lost: its writeback failed, the data is not on the disk'],
  ['handed', 'handed: to a FUSE daemon, which decides where it goes'],
  ['failed', 'failed']];

function callName(d) { return d.syscall + ' by ' + d.comm; }
// The file's path when the trace has it, else its device and inode; an overlay file's upper
// file after it.
function fileText(d) {
  var backing = d.backing ? ' (overlay ' + d.dev + ' over device ' + d.backing.dev +
      ', inode ' + d.backing.ino + ')' : '';
  if (d.path) return d.path + backing;
  return d.dev === null ? 'none' : 'device ' + d.dev + ', inode ' + d.ino + backing;
}

// The rows a write's and a read's tooltips share: who, which file, how many bytes, how long.
function transferRows(d) {
  var l = d.labels;
  return [
    ['process', d.comm + ' (pid ' + d.pid + ', thread ' + d.tid + ')'],
    ['file', fileText(d) + (d.fd !== null ? ', fd ' + d.fd : '')],
    ['bytes', l.bytes + ' at offset ' + fmtCount(d.offset) +
                  (d.requested !== d.bytes ? ' (asked ' + l.requested + ')' : '')],
    ['latency', l.latency + ', started at ' + l.start]];
}

function writeTip(d) {
  var l = d.labels;
  var durable = d.durable_ns !== null
      ? l.durable_after + ' after it returned' +
            (d.durable_via ? ' (via ' + d.durable_via + ')' : '')
      : d.state === 'discarded' ? 'never: discarded at ' + l.discarded
      : d.state === 'lost' ? 'never: its writeback failed (' + d.lost_error + ') at ' + l.lost
      : d.state === 'memory' ? 'never: it lives in memory only'
      : d.state === 'handed' ? 'not the kernel\'s to say: handed to the FUSE daemon' +
            (d.fuse_daemon ? ' ' + d.fuse_daemon.comm + ' (pid ' + d.fuse_daemon.pid + ')' : '')
      : 'not by the end of the trace';
  var flags = [d.direct ? 'O_DIRECT' : null, d.sync ? 'O_SYNC' : null, d.append ? 'O_APPEND' : null]
                  .filter(Boolean).join(', ');
  var rows = transferRows(d).concat([
    ['state', d.state + (d.incomplete ? ' (incomplete: records were lost)' : '')],
    ['durable', durable],
    ['pages dirtied', fmtCount(d.pages_dirtied)],
    ['throttled', d.throttled_ns > 0 ? l.throttled + ' in ' +
                  plural(d.throttle_events, 'pause', 'pauses') : 'no'],
    ['writeback waits', d.writeback_waits > 0 ? fmtCount(d.writeback_waits) : null],
    ['requests', fmtCount(d.requests_count)],
    ['flags', flags],
    ['error', d.error]]);
  return {title: callName(d), rows: rows.concat(causeRows(d))};
}

function syncTip(d) {
  var rows = [
    ['process', d.comm + ' (pid ' + d.pid + ', thread ' + d.tid + ')'],
    ['file', fileText(d)],
    ['latency', d.labels.latency + ', started at ' + d.labels.start]];
  PHASES.forEach(function (p) {
    var v = d.phases[p[0] + '_ns'];
    rows.push([p[1], d.labels.phases[p[0]] + ' (' + pct(v, d.latency_ns) + ')']);
  });
  rows.push(['data requests', fmtCount(d.requests_count)],
            ['cache flushes', fmtCount(d.flushes_count)],
            ['journal commits', fmtCount(d.journal_commits_count)],
            ['incomplete', d.incomplete ? 'yes: records were lost' : null], ['error', d.error]);
  return {title: callName(d), rows: rows.concat(causeRows(d))};
}

// A read's tooltip: where its pages came from (the per-file table's terms).
function readTip(d) {
  var rows = transferRows(d).concat([
    ['pages', d.direct ? 'none: O_DIRECT, around the page cache'
                       : fmtCount(d.pages_from_device) + ' from the device, ' +
                             fmtCount(d.pages_cached) + ' from the page cache'],
    ['read ahead', d.readahead_pages > 0 ? plural(d.readahead_pages, 'page', 'pages') +
                       ' past its last byte' : null],
    ['incomplete', d.incomplete ? 'yes: records were lost' : null],
    ['error', d.error]]);
  return {title: callName(d), rows: rows.concat(causeRows(d))};
}

function causeRows(d) {
  if (!d.causes) return [];
  return CAUSES.map(function (c) {
    var v = d.causes[c[0] + '_ns'];
    return [c[1], d.labels.causes[c[0]] + ' (' + pct(v, d.latency_ns) + ')'];
  });
}

function legendItem(box, swatch, label) {
  box.append(h('span', {class: 'item'}, swatch, label));
}
function swatch(cls) { return h('span', {class: 'swatch ' + cls}); }
function svgSwatch(draw) {
  var svg = s('svg', {width: 22, height: 14, 'aria-hidden': 'true'});
  draw(svg);
  return svg;
}

// ---- stacked bars (sync phases, slow-call causes) ------------------------------------------
// rows: [{label, total, totalLabel, parts: [{key, name, value, label}], describe}]
// colorPrefix-KEY is the CSS class that colors part KEY (phase-journal, cause-blocked, …).
function stackedBars(container, id, rows, segClass, colorPrefix, unitName) {
  var width = Math.max(720, container.clientWidth || 1200);
  var labelW = 340, totalW = 80, rowH = 24, barH = 16, top = 4;
  var plotW = width - labelW - totalW - 10;
  var max = Math.max.apply(null, rows.map(function (r) { return r.total; }).concat([1]));
  var height = top + rows.length * rowH + 4;
  var svg = s('svg', {id: id, width: width, height: height, viewBox: '0 0 ' + width + ' ' + height,
                      role: 'img', 'aria-label': unitName}, container);
  rows.forEach(function (r, i) {
    var y = top + i * rowH;
    var label = stext(svg, labelW - 8, y + barH / 2 + 4, truncate(r.label, 56),
                      {'text-anchor': 'end'});
    s('title', {}, label).textContent = r.label;
    var x = labelW;
    r.parts.forEach(function (p) {
      var w = p.value / max * plotW;
      if (w <= 0) return;
      var seg = s('rect', {x: x, y: y, width: Math.max(w, 0.5), height: barH,
                           class: segClass + ' ' + colorPrefix + '-' + p.key}, svg);
      tip(seg, function () {
        var d = r.describe();
        d.title = p.name + ': ' + p.label + ' of ' + r.totalLabel + ' (' +
                  pct(p.value, r.total) + ')';
        return d;
      });
      var text = p.label;
      if (w > text.length * 6.2 + 8) stext(svg, x + w / 2, y + barH / 2 + 4, text,
                                            {'text-anchor': 'middle', class: 'seg-label'});
      x += w;
    });
    stext(svg, labelW + r.total / max * plotW + 6, y + barH / 2 + 4, r.totalLabel);
  });
  return svg;
}

function partsOf(d, names, field) {
  return names.map(function (n) {
    return {key: n[0], name: n[1], value: Number(d[field][n[0] + '_ns']) || 0,
            label: d.labels[field][n[0]]};
  });
}

function namedLegend(box, names, cls) {
  names.forEach(function (n) {
    var item = h('span', {class: 'item'}, swatch(cls + '-' + n[0]), h('b', {}, n[1]), ': ' + n[2]);
    box.append(item);
  });
}

return {
  h: h,
  s: s,
  stext: stext,
  fmtCount: fmtCount,
  plural: plural,
  slowestFirstHint: slowestFirstHint,
  pct: pct,
  niceTicks: niceTicks,
  axisLabel: axisLabel,
  truncate: truncate,
  tip: tip,
  callName: callName,
  fileText: fileText,
  writeTip: writeTip,
  syncTip: syncTip,
  readTip: readTip,
  legendItem: legendItem,
  swatch: swatch,
  svgSwatch: svgSwatch,
  stackedBars: stackedBars,
  partsOf: partsOf,
  namedLegend: namedLegend,
  data: data,
  summary: summary,
  origin: origin,
  pageLabels: pageLabels,
  PHASES: PHASES,
  CAUSES: CAUSES,
  STATES: STATES,
};
})();
