// SPDX-License-Identifier: Apache-2.0
// The HTML report's script: draws the data HtmlSink embeds in the page (#data). It builds every
// element with createElement/textContent, never from markup, so nothing in the data (comms are
// chosen by any process) is ever parsed as markup. Durations and sizes arrive already formatted
// (each object's `labels`, by the same code as the text output); the script only lays them out,
// and formats nothing but counts, shares and the timeline's axis.
(function () {
'use strict';

function reportError(message) {
  var box = document.getElementById('errors');
  var line = document.createElement('div');
  line.textContent = 'This page failed to draw: ' + message;
  box.appendChild(line);
  box.hidden = false;
}

// The building blocks and the data, from report_parts.js.
var h = wpReportParts.h, s = wpReportParts.s, stext = wpReportParts.stext,
    fmtCount = wpReportParts.fmtCount, plural = wpReportParts.plural,
    slowestFirstHint = wpReportParts.slowestFirstHint, pct = wpReportParts.pct,
    niceTicks = wpReportParts.niceTicks, axisLabel = wpReportParts.axisLabel,
    truncate = wpReportParts.truncate, tip = wpReportParts.tip,
    callName = wpReportParts.callName, fileText = wpReportParts.fileText,
    writeTip = wpReportParts.writeTip, syncTip = wpReportParts.syncTip,
    readTip = wpReportParts.readTip,
    legendItem = wpReportParts.legendItem,
    swatch = wpReportParts.swatch, svgSwatch = wpReportParts.svgSwatch,
    data = wpReportParts.data, summary = wpReportParts.summary, origin = wpReportParts.origin,
    pageLabels = wpReportParts.pageLabels, PHASES = wpReportParts.PHASES,
    CAUSES = wpReportParts.CAUSES, STATES = wpReportParts.STATES,
    stackedBars = wpReportParts.stackedBars, partsOf = wpReportParts.partsOf,
    namedLegend = wpReportParts.namedLegend;

// ---- header ---------------------------------------------------------------------------------
function drawHeader() {
  var procs = (data.processes || []).map(function (p) { return p.comm + ' (pid ' + p.pid + ')'; });
  var files = (data.files || []).map(function (f) {
    return f.path ? f.path : f.dev + ' inode ' + f.ino;
  });
  var more = function (shown, total) {
    return total > shown ? ' and ' + (total - shown) + ' more' : '';
  };
  var calls = [plural(summary.writes || 0, 'write', 'writes'),
               plural(summary.fsyncs || 0, 'sync call', 'sync calls')];
  if (summary.reads > 0) calls.push(plural(summary.reads, 'read', 'reads'));  // --reads
  if (summary.faults > 0) calls.push(plural(summary.faults, 'fault', 'faults'));  // --reads: faults on mappings
  var text = 'Traced ' + calls.slice(0, -1).join(', ') + ' and ' + calls[calls.length - 1];
  if (procs.length) text += ' from ' + procs.join(', ') + more(procs.length, data.process_count);
  if (files.length) {
    text += ', on ' + plural(data.file_count, 'file', 'files') + ' (' + files.join(', ') +
            more(files.length, data.file_count) + ')';
  }
  text += ', over ' + pageLabels.duration + '.';
  if (data.generated_at) text += ' Report written ' + data.generated_at + '.';
  document.getElementById('subject').textContent = text;

  var cards = document.getElementById('totals');
  function card(value, label, bad) {
    cards.append(h('div', {class: 'card' + (bad ? ' bad' : '')}, h('div', {class: 'value'}, value),
                   h('div', {class: 'label'}, label)));
  }
  card(fmtCount(summary.writes || 0), 'writes');
  card(fmtCount(summary.fsyncs || 0), 'sync calls (fsync, fdatasync, …)');
  if (summary.reads > 0) card(fmtCount(summary.reads), 'reads');
  card(pageLabels.duration, 'traced for');
  card(fmtCount(summary.lost || 0), 'records lost', summary.lost > 0);
  card(fmtCount(summary.incomplete || 0), 'incomplete items', summary.incomplete > 0);
  if (summary.lost_writes > 0)
    card(fmtCount(summary.lost_writes), 'writes lost (writeback failed)', true);
  card(fmtCount(summary.events || 0), 'kernel events decoded');

  if (summary.lost > 0) {
    var note = document.getElementById('lost-note');
    var hooks = Object.keys(summary.lost_by_hook || {}).map(function (k) {
      return k + ' ' + fmtCount(summary.lost_by_hook[k]);
    });
    note.textContent = fmtCount(summary.lost) + ' kernel records were lost because the ring ' +
        'buffer was full (' + hooks.join(', ') + '): some items below are missing stages or ' +
        'missing altogether.';
    note.hidden = false;
  }
  var capped = [];
  if (data.writes_seen > data.writes.length)
    capped.push('the ' + fmtCount(data.writes.length) + ' slowest of ' +
                fmtCount(data.writes_seen) + ' writes');
  if (data.syncs_seen > data.syncs.length)
    capped.push('the ' + fmtCount(data.syncs.length) + ' slowest of ' +
                fmtCount(data.syncs_seen) + ' sync calls');
  var reads = data.reads || [];
  if (data.reads_seen > reads.length)
    capped.push('the ' + fmtCount(reads.length) + ' slowest of ' +
                fmtCount(data.reads_seen) + ' reads');
  if (capped.length) {
    var cap = document.getElementById('cap-note');
    cap.textContent = 'To stay quick to open, this page draws only ' + capped.join(' and ') +
        '. The totals and the percentile table cover every call.';
    cap.hidden = false;
  }
}

// ---- timeline -------------------------------------------------------------------------------
function drawTimeline() {
  var chart = document.getElementById('timeline-chart');
  var legend = document.getElementById('timeline-legend');
  var byState = data.writes_by_state || {};
  STATES.forEach(function (st) {
    var sw = svgSwatch(function (svg) {
      s('rect', {x: 1, y: 2, width: 20, height: 10, class: 'bar state-' + st[0]}, svg);
    });
    legendItem(legend, sw, 'write, ' + st[1] + ' (' + fmtCount(byState[st[0]] || 0) + ')');
  });
  legendItem(legend, svgSwatch(function (svg) {
    s('rect', {x: 1, y: 2, width: 20, height: 10, class: 'bar sync'}, svg);
  }), 'sync call (fsync, fdatasync, …)');
  legendItem(legend, svgSwatch(function (svg) {
    s('line', {x1: 1, y1: 7, x2: 15, y2: 7, class: 'durable-wait'}, svg);
    s('path', {d: 'M16 2 L21 7 L16 12 L11 7 Z', class: 'durable-mark'}, svg);
  }), 'returned … became durable');
  var reads = data.reads || [];  // with --reads
  if (reads.length) {
    [['device', 'read, some pages from the device'],
     ['cached', 'read, every page from the page cache']].forEach(function (r) {
      legendItem(legend, svgSwatch(function (svg) {
        s('rect', {x: 1, y: 2, width: 20, height: 10, class: 'bar read ' + r[0]}, svg);
      }), r[1]);
    });
  }

  var items = [];
  data.writes.forEach(function (d) { items.push({kind: 'write', d: d}); });
  data.syncs.forEach(function (d) { items.push({kind: 'sync', d: d}); });
  reads.forEach(function (d) { items.push({kind: 'read', d: d}); });
  if (!items.length) {
    chart.append(h('p', {class: 'muted'},
                   'Nothing to draw: no write, sync or read call was traced.'));
    return;
  }
  items.sort(function (a, b) { return a.d.start_ns - b.d.start_ns; });

  // One lane per thread, in order of first appearance; past MAX_LANES the quietest threads
  // share one last lane.
  var MAX_LANES = 40;
  var lanesByTid = new Map();
  items.forEach(function (it) {
    var lane = lanesByTid.get(it.d.tid);
    if (!lane) {
      lane = {label: it.d.comm + ' · thread ' + it.d.tid, count: 0, first: lanesByTid.size};
      lanesByTid.set(it.d.tid, lane);
    }
    lane.count++;
  });
  var lanes = Array.from(lanesByTid.values());
  var other = null;
  if (lanes.length > MAX_LANES) {
    lanes.sort(function (a, b) { return b.count - a.count; });
    var rest = lanes.slice(MAX_LANES - 1);
    lanes = lanes.slice(0, MAX_LANES - 1).sort(function (a, b) { return a.first - b.first; });
    other = {label: rest.length + ' other threads', count: 0};
    rest.forEach(function (l) { l.shared = other; });
    lanes.push(other);
  }
  lanes.forEach(function (l, i) { l.index = i; });
  items.forEach(function (it) {
    var lane = lanesByTid.get(it.d.tid);
    it.lane = (lane.shared || lane).index;
  });

  var fullStart = origin, fullEnd = origin;
  items.forEach(function (it) {
    fullStart = Math.min(fullStart, Number(it.d.start_ns));
    fullEnd = Math.max(fullEnd, Number(it.d.end_ns), Number(it.d.durable_ns || 0));
  });
  if (fullEnd <= fullStart) fullEnd = fullStart + 1000;
  var pad = (fullEnd - fullStart) * 0.01;
  var full = [fullStart - pad, fullEnd + pad];
  var view = full.slice();
  var resetButton = document.getElementById('zoom-reset');
  resetButton.addEventListener('click', function () { view = full.slice(); render(); });

  function render() {
    chart.replaceChildren();
    var width = Math.max(720, chart.clientWidth || 1200);
    var labelW = 190, rightPad = 14, axisH = 30;
    var plotW = width - labelW - rightPad;
    var laneH = lanes.length > 16 ? 16 : 26;
    var height = axisH + lanes.length * laneH + 6;
    var t0 = view[0], t1 = view[1];
    var x = function (t) { return labelW + (t - t0) / (t1 - t0) * plotW; };
    var svg = s('svg', {id: 'timeline-svg', width: width, height: height,
                        viewBox: '0 0 ' + width + ' ' + height, role: 'img',
                        'aria-label': 'timeline of writes, sync calls and reads'}, chart);
    s('rect', {x: labelW, y: 0, width: plotW, height: height}, s('clipPath', {id: 'plot-clip'},
      s('defs', {}, svg)));

    lanes.forEach(function (l, i) {
      var y = axisH + i * laneH;
      if (i % 2 === 0) s('rect', {x: 0, y: y, width: width, height: laneH, class: 'lane-bg'}, svg);
      var label = stext(svg, labelW - 8, y + laneH / 2 + 4, truncate(l.label, 30),
                        {'text-anchor': 'end'});
      s('title', {}, label).textContent = l.label;
    });

    var tk = niceTicks(t0 - origin, t1 - origin, Math.floor(plotW / 110));
    var largest = Math.max(Math.abs(t0 - origin), Math.abs(t1 - origin));
    tk.ticks.forEach(function (v) {
      var px = x(v + origin);
      if (px < labelW - 0.5 || px > labelW + plotW + 0.5) return;
      s('line', {x1: px, x2: px, y1: axisH - 4, y2: height, class: 'grid'}, svg);
      stext(svg, px, axisH - 9, (v > 0 ? '+' : '') + axisLabel(v, tk.step, largest),
            {'text-anchor': 'middle', class: 'axis-label'});
    });
    stext(svg, 8, axisH - 9, 'thread                    time →', {class: 'axis-label'});

    var plot = s('g', {'clip-path': 'url(#plot-clip)'}, svg);
    // The durable-wait lines go over the bars: they mostly run across the sync that made the
    // data durable.
    var bars = s('g', {}, plot), waits = s('g', {}, plot), marks = s('g', {}, plot);
    var barH = Math.round(laneH * 0.62);
    items.forEach(function (it) {
      var d = it.d;
      var start = Number(d.start_ns), end = Number(d.end_ns);
      var durable = d.durable_ns == null ? null : Number(d.durable_ns);  // null or absent
      var last = Math.max(end, durable || 0);
      if (last < t0 || start > t1) return;
      var yTop = axisH + it.lane * laneH + (laneH - barH) / 2;
      var yMid = axisH + it.lane * laneH + laneH / 2;
      var x0 = x(start), x1 = Math.max(x(end), x0 + 2);
      if (it.kind === 'write' && durable !== null) {
        var xd = x(durable);
        if (xd > x1) s('line', {x1: x1, x2: xd, y1: yMid, y2: yMid, class: 'durable-wait'}, waits);
        var r = Math.min(5, barH / 2 + 1);
        var mark = s('path', {d: 'M' + xd + ' ' + (yMid - r) + ' L' + (xd + r) + ' ' + yMid + ' L' +
                                 xd + ' ' + (yMid + r) + ' L' + (xd - r) + ' ' + yMid + ' Z',
                              class: 'durable-mark'}, marks);
        tip(mark, function () {
          return {title: 'durable at ' + d.labels.durable,
                  rows: [['write', callName(d) + ', started at ' + d.labels.start],
                         ['via', d.durable_via],
                         ['after return', d.labels.durable_after]]};
        });
      }
      var cls = it.kind === 'write' ? 'bar write state-' + d.state
              : it.kind === 'read' ? 'bar read ' + (d.pages_from_device > 0 ? 'device' : 'cached')
              : 'bar sync';
      if (it.kind !== 'write' && d.error) cls += ' failed';
      var bar = s('rect', {x: x0, y: yTop, width: x1 - x0, height: barH, class: cls}, bars);
      var tips = {write: writeTip, sync: syncTip, read: readTip};
      tip(bar, function () { return tips[it.kind](d); });
    });

    // Drag across the plot to zoom into that span.
    var selection = null, dragFrom = null;
    var toTime = function (px) { return t0 + (px - labelW) / plotW * (t1 - t0); };
    var localX = function (e) {
      var box = svg.getBoundingClientRect();
      return Math.min(labelW + plotW, Math.max(labelW, (e.clientX - box.left) * width / box.width));
    };
    svg.addEventListener('mousedown', function (e) {
      dragFrom = localX(e);
      selection = s('rect', {x: dragFrom, y: axisH, width: 0, height: height - axisH,
                             class: 'selection'}, svg);
      e.preventDefault();
    });
    svg.addEventListener('mousemove', function (e) {
      if (dragFrom === null) return;
      var px = localX(e);
      selection.setAttribute('x', Math.min(px, dragFrom));
      selection.setAttribute('width', Math.abs(px - dragFrom));
    });
    var finish = function (e) {
      if (dragFrom === null) return;
      var px = localX(e), from = dragFrom;
      dragFrom = null;
      selection.remove();
      if (Math.abs(px - from) < 5) return;
      view = [toTime(Math.min(px, from)), toTime(Math.max(px, from))];
      if (view[1] - view[0] < 200) view[1] = view[0] + 200;  // no deeper than 200 ns
      render();
    };
    svg.addEventListener('mouseup', finish);
    svg.addEventListener('mouseleave', finish);

    var zoomed = view[0] > full[0] || view[1] < full[1];
    resetButton.hidden = !zoomed;
    document.getElementById('timeline-range').textContent =
        (zoomed ? 'Zoomed in: ' : 'Showing ') + 'from +' +
        axisLabel(Math.max(0, view[0] - origin), tk.step, largest) + ' to +' +
        axisLabel(view[1] - origin, tk.step, largest) + ' (' +
        axisLabel(view[1] - view[0], tk.step, largest) + ' across). ' +
        'Times are since the first traced call. Drag across the chart to zoom in.';
  }
  render();
  var lastWidth = chart.clientWidth;
  window.addEventListener('resize', function () {
    if (chart.clientWidth !== lastWidth) { lastWidth = chart.clientWidth; render(); }
  });
}

function drawPhases() {
  var MAX_ROWS = 40;
  var syncs = data.syncs.slice().sort(function (a, b) { return b.latency_ns - a.latency_ns; });
  var hint = document.getElementById('phase-hint');
  if (!syncs.length) {
    hint.textContent = 'No fsync, fdatasync, sync_file_range or sync call was traced.';
    return;
  }
  hint.textContent = slowestFirstHint('One bar per sync call', syncs.length, MAX_ROWS,
                                      'split into what it was waiting for');
  namedLegend(document.getElementById('phase-legend'), PHASES, 'phase');
  var rows = syncs.slice(0, MAX_ROWS).map(function (d) {
    return {label: d.labels.start + ' · ' + d.syscall + ' · ' + d.comm + ' (thread ' + d.tid + ')',
            total: Number(d.latency_ns), totalLabel: d.labels.latency,
            parts: partsOf(d, PHASES, 'phases'),
            describe: function () { return syncTip(d); }};
  });
  stackedBars(document.getElementById('phase-chart'), 'phase-svg', rows, 'phase-seg', 'phase',
              'sync call phases');

  var stats = summary.fsync_phases;
  if (!stats) return;
  var table = h('table', {id: 'phase-table'});
  table.append(h('tr', {}, h('th', {}, 'Phase'), h('th', {}, 'p50'), h('th', {}, 'p99'),
                 h('th', {}, 'max'), h('th', {}, 'total'), h('th', {}, 'share of sync time'),
                 h('th', {class: 'text'}, 'what it is')));
  var all = stats.latency_ns;
  var rowOf = function (name, st, cls, what, total) {
    return h('tr', total ? {class: 'total'} : {},
             h('td', {}, cls ? swatch(cls) : '', cls ? ' ' : '', name),
             h('td', {}, st.labels.p50), h('td', {}, st.labels.p99), h('td', {}, st.labels.max),
             h('td', {}, st.labels.total), h('td', {}, pct(st.total, all.total)),
             h('td', {class: 'text'}, what));
  };
  table.append(rowOf('Whole call', all, null,
                     'latency of ' + plural(summary.fsyncs, 'sync call', 'sync calls'), true));
  PHASES.forEach(function (p) {
    var st = stats[p[0] + '_ns'];
    if (st) table.append(rowOf(p[1], st, 'phase-' + p[0], p[2], false));
  });
  var box = document.getElementById('phase-summary');
  box.append(h('p', {class: 'hint'}, 'Every sync call of the trace: percentiles per phase ' +
                                          '(p50: half the calls spent less; p99: all but 1 in ' +
                                          '100 did).'),
             table);
}

function drawCauses() {
  var MAX_ROWS = 30;
  var hint = document.getElementById('cause-hint');
  var slow = [];
  data.writes.forEach(function (d) { if (d.causes) slow.push({kind: 'write', d: d}); });
  data.syncs.forEach(function (d) { if (d.causes) slow.push({kind: 'sync', d: d}); });
  if (!slow.length) {
    hint.textContent = 'No breakdown in this trace. Run writepath with --min-latency (for ' +
        'example --min-latency 1ms) to keep only the calls at least that slow and split each one ' +
        'into on-CPU, throttled, writeback-wait, blocked and runnable time.';
    return;
  }
  slow.sort(function (a, b) { return b.d.latency_ns - a.d.latency_ns; });
  hint.textContent = slowestFirstHint('One bar per call', slow.length, MAX_ROWS,
                                      'split by what the thread was doing');
  namedLegend(document.getElementById('cause-legend'), CAUSES, 'cause');
  var rows = slow.slice(0, MAX_ROWS).map(function (it) {
    var d = it.d;
    var size = it.kind === 'write' ? ' ' + d.labels.bytes : '';
    return {label: d.labels.start + ' · ' + d.syscall + size + ' · ' + d.comm +
                   ' (thread ' + d.tid + ')',
            total: Number(d.latency_ns), totalLabel: d.labels.latency,
            parts: partsOf(d, CAUSES, 'causes'),
            describe: function () { return it.kind === 'write' ? writeTip(d) : syncTip(d); }};
  });
  stackedBars(document.getElementById('cause-chart'), 'cause-svg', rows, 'cause-seg', 'cause',
              'slow call causes');
}

// ---- what the slowest calls waited on --------------------------------------------------------
// One block per call of data.why (the slowest with named causes, slowest first): a row per
// cause with its time and share of the latency, the frame or tracepoint that named it, who
// woke the call (and what that thread was doing) or held the lock, the top of its stack, and
// the journal commit and cache flushes it waited on.
function whyWho(w) {
  if (w.holder) return 'held by ' + w.holder.comm + ' (pid ' + w.holder.pid + '/' + w.holder.tid +
                       ')';
  if (!w.waker) return '';
  // The page's data says it as the text output does (from an interrupt or a timer, the
  // task is only where it landed); older data without it, from comm and pid.
  var who = 'woken by ' + (w.waker.text || (w.waker.comm + ' (pid ' + w.waker.pid +
            (w.waker.kernel_thread ? ', kernel thread)' : '/' + w.waker.tid + ')')));
  if (w.waker.frames.length) who += ' in ' + w.waker.frames.join(' < ');
  return who;
}

function whyChain(w) {
  var parts = [];
  if (w.commit) {
    var c = w.commit;
    parts.push('journal commit ' + c.transaction + ' on ' + c.dev + ' ' + c.labels.start + '..' +
               (c.labels.end || '(not ended)') + (c.labels.ran ? ', ran ' + c.labels.ran : ''));
  }
  w.flushes.forEach(function (f) {
    parts.push(f.rwbs + ' ' + f.dev + ' at ' + f.labels.issue + ': ' + f.labels.device +
               ' on the device');
  });
  return parts.join('; ');
}

function drawWhy() {
  var list = data.why || [];
  var hint = document.getElementById('why-hint');
  if (!list.length) {
    hint.textContent = 'No call of this trace has named causes: they come with --min-latency ' +
        '(unless --no-stacks), from the kernel stacks each slow call slept with.';
    return;
  }
  hint.textContent = 'The ' + plural(list.length, 'slowest call', 'slowest calls') +
      ' with named causes, slowest first. Each cause is named by one rule from the call\'s ' +
      'sleeps (their kernel stacks, innermost frame first: a < b means a was called from b) ' +
      'and its tracepoints; "other" is a sleep no rule names, shown with its stack.';
  var box = document.getElementById('why-list');
  list.forEach(function (d) {
    var file = d.path ? ' on ' + d.path : '';
    var block = h('div', {class: 'why-call'},
                  h('h4', {}, d.syscall + ' by ' + d.comm + ' (thread ' + d.tid + ')' + file +
                              ': ' + d.labels.latency + ', started at ' + d.labels.start));
    var table = h('table', {class: 'why-table'});
    table.append(h('tr', {}, h('th', {}, 'Cause'), h('th', {}, 'time'), h('th', {}, 'share'),
                   h('th', {}, 'sleeps'), h('th', {class: 'text'}, 'named by'),
                   h('th', {class: 'text'}, 'woken by / held by'),
                   h('th', {class: 'text'}, 'top of its stack'),
                   h('th', {class: 'text'}, 'waited on')));
    d.waits.forEach(function (w) {
      table.append(h('tr', {class: 'why-' + w.cause},
                     h('td', {}, w.cause === 'other' ? 'blocked (other)' : w.cause),
                     h('td', {}, w.labels.ns), h('td', {}, w.labels.share),
                     h('td', {}, w.sleeps ? fmtCount(w.sleeps) : ''),
                     h('td', {class: 'text'}, w.evidence),
                     h('td', {class: 'text'}, whyWho(w)),
                     h('td', {class: 'frames'}, w.frames.join(' < ')),
                     h('td', {class: 'text'}, whyChain(w))));
    });
    block.append(table);
    if (Number(d.unslotted_ns) > 0)
      block.append(h('p', {class: 'hint'}, d.labels.unslotted + ' asleep with stacks beyond ' +
                                               'those the tracer kept for the call.'));
    box.append(block);
  });
}

// ---- dirty throttling -----------------------------------------------------------------------
function drawThrottle() {
  var pauses = data.throttle_pauses || [];
  var hint = document.getElementById('throttle-hint');
  if (!pauses.length) {
    hint.textContent = 'No writer was paused by dirty throttling: the dirty page cache stayed ' +
        'under the kernel\'s limits.';
    return;
  }
  var worst = 0;
  pauses.forEach(function (p) {
    if (p.limit_pages > 0) worst = Math.max(worst, p.dirty_pages / p.limit_pages);
  });
  hint.textContent = 'When too much memory is dirty, the kernel makes writers sleep inside ' +
      'write() until writeback catches up. ' +
      plural(data.throttle_pauses_seen, 'pause', 'pauses') +
      (data.throttle_pauses_seen > pauses.length ? ' (the first ' + fmtCount(pauses.length) +
                                                   ' drawn)' : '') +
      ', ' + pageLabels.throttle_asleep + ' asleep in those drawn; dirty memory reached ' +
      (worst * 100).toFixed(0) + '% of the limit. Each dot is a pause: how many pages were ' +
      'dirty at that moment; the red line is the dirty limit. Throttling starts below the limit: ' +
      'past halfway between the background threshold and the limit, writers are slowed down.';
  var legend = document.getElementById('throttle-legend');
  legendItem(legend, svgSwatch(function (svg) {
    s('circle', {cx: 11, cy: 7, r: 4, class: 'pause-dot'}, svg);
  }), 'a throttling pause: pages dirty then');
  legendItem(legend, svgSwatch(function (svg) {
    s('line', {x1: 1, y1: 7, x2: 21, y2: 7, class: 'limit-line'}, svg);
  }), 'the global dirty limit (pages)');

  var chart = document.getElementById('throttle-chart');
  var width = Math.max(720, chart.clientWidth || 1200);
  var labelW = 100, rightPad = 14, top = 10, bottom = 26, plotH = 220;
  var plotW = width - labelW - rightPad, height = top + plotH + bottom;
  var sorted = pauses.slice().sort(function (a, b) { return a.ts - b.ts; });
  var t0 = Number(sorted[0].ts), t1 = Number(sorted[sorted.length - 1].ts);
  if (t1 <= t0) t1 = t0 + 1e6;
  // The point is dirty against limit, so the y axis starts near them rather than at 0.
  var maxPages = 1, minPages = Infinity;
  sorted.forEach(function (p) {
    maxPages = Math.max(maxPages, p.dirty_pages, p.limit_pages);
    minPages = Math.min(minPages, p.dirty_pages, p.limit_pages);
  });
  var yTicks = niceTicks(minPages * 0.9, maxPages * 1.05, 5);
  var lowPages = Math.floor(minPages * 0.9 / yTicks.step) * yTicks.step;
  maxPages = Math.ceil(maxPages * 1.05 / yTicks.step) * yTicks.step;
  var x = function (t) { return labelW + (t - t0) / (t1 - t0) * plotW; };
  var y = function (pages) {
    return top + plotH - (pages - lowPages) / (maxPages - lowPages) * plotH;
  };
  var svg = s('svg', {id: 'throttle-svg', width: width, height: height,
                      viewBox: '0 0 ' + width + ' ' + height, role: 'img',
                      'aria-label': 'dirty pages at each throttling pause'}, chart);
  niceTicks(lowPages, maxPages, 5).ticks.forEach(function (v) {
    s('line', {x1: labelW, x2: labelW + plotW, y1: y(v), y2: y(v), class: 'grid'}, svg);
    stext(svg, labelW - 6, y(v) + 4, fmtCount(Math.round(v)) + ' pages',
          {'text-anchor': 'end', class: 'axis-label'});
  });
  var xt = niceTicks(t0 - origin, t1 - origin, Math.floor(plotW / 110));
  xt.ticks.forEach(function (v) {
    var px = x(v + origin);
    if (px < labelW - 0.5 || px > labelW + plotW + 0.5) return;
    stext(svg, px, top + plotH + 16, '+' + axisLabel(v, xt.step, t1 - origin),
          {'text-anchor': 'middle', class: 'axis-label'});
  });
  s('path', {d: sorted.map(function (p, i) {
    return (i ? 'L' : 'M') + x(p.ts).toFixed(1) + ' ' + y(p.limit_pages).toFixed(1);
  }).join(' '), class: 'limit-line'}, svg);
  sorted.forEach(function (p) {
    var dot = s('circle', {cx: x(p.ts), cy: y(p.dirty_pages), r: 3.5, class: 'pause-dot'}, svg);
    tip(dot, function () {
      return {title: 'paused ' + p.labels.pause + ' at ' + p.labels.at,
              rows: [['writer', p.comm + ' (thread ' + p.tid + ')'],
                     ['dirty', fmtCount(p.dirty_pages) + ' pages'],
                     ['limit', fmtCount(p.limit_pages) + ' pages'],
                     ['dirty / limit', pct(p.dirty_pages, p.limit_pages)]]};
    });
  });
}

// Each part draws on its own: one failing leaves the others readable, and says so.
[drawHeader, drawTimeline, drawPhases, drawCauses, drawWhy, drawThrottle,
 wpReportTables.drawContainers, wpReportTables.drawNeighbours, wpReportTables.drawDirectIo,
 wpReportTables.drawReadFiles].forEach(
    function (draw) {
      try {
        draw();
      } catch (e) {
        reportError(draw.name + ': ' + (e && e.stack ? e.stack : e));
      }
    });
})();
