// SPDX-License-Identifier: Apache-2.0
// The HTML report's tables: containers, O_DIRECT verdicts and each file's reads, from the data
// HtmlSink embeds (#data), built as report.js builds its charts (createElement/textContent,
// labels already formatted). report.js calls them, each on its own.
var wpReportTables = (function () {
'use strict';

var h = wpReportParts.h, fmtCount = wpReportParts.fmtCount, fileText = wpReportParts.fileText,
    data = wpReportParts.data, summary = wpReportParts.summary;

// ---- containers -----------------------------------------------------------------------------
function drawContainers() {
  var rows = data.containers || [];
  if (!rows.length) return;
  document.getElementById('containers').hidden = false;
  var table = h('table', {id: 'container-rows'});
  table.append(h('tr', {}, h('th', {}, 'Container'), h('th', {}, 'Runtime'), h('th', {}, 'Pod'),
                 h('th', {}, 'Writes'), h('th', {}, 'Durable'), h('th', {}, 'Sync calls'),
                 h('th', {}, 'Sync p99'), h('th', {}, 'Slowest call'),
                 h('th', {}, 'Incomplete')));
  rows.forEach(function (c) {
    table.append(h('tr', {}, h('td', {title: c.id}, c.name), h('td', {}, c.runtime),
                   h('td', {}, c.pod || '–'), h('td', {}, fmtCount(c.writes)),
                   h('td', {}, c.labels.durable), h('td', {}, fmtCount(c.syncs)),
                   h('td', {}, c.labels.sync_p99),
                   h('td', {}, c.labels.slowest + ' (' + c.slowest_call + ')'),
                   h('td', {class: c.incomplete > 0 ? 'verdict-bad' : ''}, fmtCount(c.incomplete))));
  });
  document.getElementById('containers-table').append(table);
}

// ---- O_DIRECT -------------------------------------------------------------------------------
function drawDirectIo() {
  var verdicts = summary.direct_io || [];
  if (!verdicts.length) return;
  document.getElementById('direct-io').hidden = false;
  var table = h('table', {id: 'direct-io-verdicts'});
  table.append(h('tr', {}, h('th', {}, 'Process'), h('th', {}, 'File'), h('th', {}, 'Writes'),
                 h('th', {}, 'Bytes'), h('th', {}, 'Pages dirtied'), h('th', {}, 'Bytes via cache'),
                 h('th', {}, 'EINVAL'), h('th', {}, 'Other errors'), h('th', {}, 'Verdict')));
  verdicts.forEach(function (v) {
    var ok = v.bypassed_page_cache;
    table.append(h('tr', {}, h('td', {}, v.comm + ' (pid ' + v.pid + ')'),
                   h('td', {}, fileText(v)),
                   h('td', {}, fmtCount(v.writes)),
                   h('td', {}, v.labels.bytes), h('td', {}, fmtCount(v.pages_dirtied)),
                   h('td', {}, v.labels.buffered_bytes), h('td', {}, fmtCount(v.einval)),
                   h('td', {}, fmtCount(v.other_errors)),
                   h('td', {class: ok ? 'verdict-good' : 'verdict-bad'},
                     ok ? 'bypassed the page cache' : 'went through the page cache')));
  });
  document.getElementById('direct-io-table').append(table);
}

// ---- neighbours ------------------------------------------------------------------------------
function ownerText(o) {
  var where = o.container ? ', container ' + o.container : (o.cgroup && o.cgroup !== '/' ?
      ', cgroup ' + o.cgroup : '');
  return o.comm + ' (pid ' + o.pid + where + ')';
}

function drawNeighbours() {
  var rows = summary.neighbours || [];
  var calls = (data.syncs || []).filter(function (s) {
    return s.neighbours && s.neighbours.length;
  });
  if (!rows.length && !calls.length) return;
  document.getElementById('neighbours').hidden = false;
  var table = h('table', {id: 'neighbours-rows'});
  table.append(h('tr', {}, h('th', {}, 'Culprit'), h('th', {}, 'Victim'), h('th', {}, 'Syncs'),
                 h('th', {}, 'Bytes inside them'), h('th', {}, 'Time charged')));
  rows.forEach(function (r) {
    table.append(h('tr', {}, h('td', {}, ownerText(r.culprit)),
                   h('td', {}, r.victim_comm + ' (pid ' + r.victim_pid + ')'),
                   h('td', {}, fmtCount(r.syncs)), h('td', {}, r.labels.bytes),
                   h('td', {}, r.labels.delay)));
  });
  document.getElementById('neighbours-table').append(table);
  var per = h('table', {id: 'neighbours-of-calls'});
  per.append(h('tr', {}, h('th', {}, 'Sync'), h('th', {}, 'Latency'), h('th', {}, 'Behind'),
               h('th', {}, 'Bytes'), h('th', {}, 'Share of the disk'), h('th', {}, 'Charged')));
  calls.sort(function (a, b) { return b.latency_ns - a.latency_ns; });
  calls.forEach(function (s) {
    s.neighbours.forEach(function (n, i) {
      var l = s.labels.neighbours[i];
      per.append(h('tr', {},
                   h('td', {}, i ? '' : s.syscall + ' ' + s.comm + ' (pid ' + s.pid + ') at ' +
                     s.labels.start),
                   h('td', {}, i ? '' : s.labels.latency), h('td', {}, ownerText(n)),
                   h('td', {}, l.bytes), h('td', {}, l.share), h('td', {}, l.delay)));
    });
  });
  document.getElementById('neighbours-calls').append(per);
}

function drawReadFiles() {
  var files = summary.read_files || [];
  if (!files.length) return;
  document.getElementById('read-files').hidden = false;
  var table = h('table', {id: 'read-files-rows'});
  table.append(h('tr', {}, h('th', {}, 'File'), h('th', {}, 'Readers'), h('th', {}, 'Reads'),
                 h('th', {}, 'Bytes'), h('th', {}, 'Pages from the device'),
                 h('th', {}, 'Pages cached'), h('th', {}, 'Readahead pages'),
                 h('th', {}, 'Hit ratio'), h('th', {}, 'Direct bytes'),
                 h('th', {}, 'Time in reads'), h('th', {}, 'Faults (major)'),
                 h('th', {}, 'Time in faults'), h('th', {}, 'Read requests'),
                 h('th', {}, 'Device rate while busy')));
  files.forEach(function (f) {
    var file = f.ino === 0 && f.dev === '0:0' ? 'other files' : fileText(f);
    table.append(h('tr', {}, h('td', {}, file), h('td', {}, fmtCount(f.processes)),
                   h('td', {}, fmtCount(f.reads) + (f.failed ? ' (' + fmtCount(f.failed) +
                                                    ' failed)' : '')),
                   h('td', {}, f.labels.bytes), h('td', {}, fmtCount(f.pages_from_device)),
                   h('td', {}, fmtCount(f.pages_cached)), h('td', {}, fmtCount(f.readahead_pages)),
                   h('td', {}, f.labels.hit_ratio), h('td', {}, f.labels.direct_bytes),
                   h('td', {}, f.labels.latency),
                   h('td', {}, fmtCount(f.major_faults + f.minor_faults) + ' (' +
                                   fmtCount(f.major_faults) + ')'),
                   h('td', {}, f.labels.fault_time), h('td', {}, f.labels.requests),
                   h('td', {}, f.labels.device_rate)));
  });
  document.getElementById('read-files-table').append(table);
  // The diagnosis: one finding per line, as the text summary prints it.
  var findings = summary.read_findings || [];
  if (!findings.length) return;
  var list = h('ul', {id: 'read-findings'});
  findings.forEach(function (f) {
    list.append(h('li', {}, h('b', {}, fileText(f) + ': ' + f.finding), ' ' + f.text));
  });
  document.getElementById('read-files-table').append(list);
}

return {drawContainers: drawContainers, drawNeighbours: drawNeighbours, drawDirectIo: drawDirectIo,
        drawReadFiles: drawReadFiles};
})();
