// SPDX-License-Identifier: Apache-2.0
// The HTML report's scripts, run in node against a stub DOM: the page HtmlSink wrote for the
// unit test HtmlSink.LabelsDurationsAndSizesAsTheTextOutputDoes (its path is argv[2]) must draw
// its charts, tables and tooltips from the labels in its data, and a part that fails must say so
// in #errors. The stub has only what the scripts use; a browser run is the integration suite's.
//
//   node report_page_test.js PAGE.html
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const vm = require('node:vm');

// ---- a DOM with just what the page's scripts call -------------------------------------------
class Node {
  constructor(tag) {
    this.tagName = tag;
    this.attributes = new Map();
    this.children = [];
    this.parentNode = null;
    this.listeners = new Map();
    this.hidden = false;
    this.style = {};
    this.clientWidth = 1200;
    this.offsetWidth = 200;
    this.offsetHeight = 80;
    this.text = null;  // a text node's text
    const node = this;
    this.classList = {
      add(name) { node.setAttribute('class', (node.className() + ' ' + name).trim()); },
      contains(name) { return node.className().split(/\s+/).includes(name); },
    };
  }
  className() { return this.getAttribute('class') || ''; }
  setAttribute(name, value) { this.attributes.set(name, String(value)); }
  getAttribute(name) { return this.attributes.has(name) ? this.attributes.get(name) : null; }
  appendChild(child) {
    if (child.parentNode) child.remove();
    child.parentNode = this;
    this.children.push(child);
    return child;
  }
  append(...items) {
    for (const item of items) this.appendChild(item instanceof Node ? item : textNode(item));
  }
  replaceChildren(...items) {
    for (const child of this.children) child.parentNode = null;
    this.children = [];
    this.append(...items);
  }
  remove() {
    if (!this.parentNode) return;
    const siblings = this.parentNode.children;
    siblings.splice(siblings.indexOf(this), 1);
    this.parentNode = null;
  }
  get textContent() {
    return this.text !== null ? this.text : this.children.map((c) => c.textContent).join('');
  }
  set textContent(value) { this.replaceChildren(String(value)); }
  addEventListener(type, listener) {
    if (!this.listeners.has(type)) this.listeners.set(type, []);
    this.listeners.get(type).push(listener);
  }
  dispatch(type, event) {
    for (const listener of this.listeners.get(type) || []) listener(event);
  }
  getBoundingClientRect() { return {left: 0, top: 0, width: 1200, height: 600}; }
  // Every node under this one (itself included) that `test` accepts.
  findAll(test) {
    const found = test(this) ? [this] : [];
    for (const child of this.children) found.push(...child.findAll(test));
    return found;
  }
}

function textNode(text) {
  const node = new Node('#text');
  node.text = String(text);
  return node;
}

// The page's elements that have an id, as the markup declares them (parent-less: the scripts only
// look elements up by id and draw into them).
function documentOf(markup, data) {
  const byId = new Map();
  for (const match of markup.matchAll(/<([a-z0-9]+)\s+([^>]*\bid="([^"]+)"[^>]*)>/g)) {
    const element = new Node(match[1]);
    element.setAttribute('id', match[3]);
    element.hidden = /(^|\s)hidden(\s|$)/.test(match[2]);
    byId.set(match[3], element);
  }
  byId.get('data').append(JSON.stringify(data));
  const document = new Node('#document');
  document.getElementById = (id) => byId.get(id) || null;
  document.createElement = (tag) => new Node(tag);
  document.createElementNS = (namespace, tag) => new Node(tag);
  return {document, byId};
}

// Runs the page's scripts (each <script> without a type, in order) against `data`.
function draw(markup, data) {
  const {document, byId} = documentOf(markup, data);
  const window = new Node('#window');
  window.innerWidth = 1400;
  window.innerHeight = 1000;
  const context = vm.createContext({document, window, console});
  const scripts = [...markup.matchAll(/<script>\n?([\s\S]*?)<\/script>/g)].map((m) => m[1]);
  assert.equal(scripts.length, 4, 'the error hook, the parts, the tables and the report script');
  for (const script of scripts) {
    try {
      vm.runInContext(script, context);
    } catch (e) {  // what the browser would hand the page's 'error' listener
      window.dispatch('error', {message: String(e), lineno: 0});
    }
  }
  return {document, window, byId};
}

const byTag = (tag) => (n) => n.tagName === tag;
const withClass = (name) => (n) => n.classList && n.classList.contains(name);
// The SVG text elements' own text (a <title> inside one is its hover text, not shown).
const texts = (root) => root.findAll(byTag('text')).map(
    (t) => t.children.filter((c) => c.text !== null).map((c) => c.text).join(''));

// ---- the page ---------------------------------------------------------------------------------
const pagePath = process.argv[2];
assert.ok(pagePath, 'usage: node report_page_test.js PAGE.html');
const page = fs.readFileSync(pagePath, 'utf8');
const dataMatch = page.match(/<script type="application\/json" id="data">([\s\S]*?)<\/script>/);
assert.ok(dataMatch, 'the page embeds its data');
const data = JSON.parse(dataMatch[1]);
const markup = page.replace(dataMatch[1], '');
assert.equal(data.writes.length, 2);
assert.equal(data.syncs.length, 1);

const tests = [];
const test = (name, body) => tests.push({name, body});

test('draws every part without an error', () => {
  const {byId} = draw(markup, data);
  assert.equal(byId.get('errors').textContent, '');
  assert.equal(byId.get('errors').hidden, true);
});

test('the header names the process and says how long the trace ran, as labelled', () => {
  const {byId} = draw(markup, data);
  const subject = byId.get('subject').textContent;
  assert.match(subject, /^Traced 2 writes, 1 sync call and 1 read from dd \(pid 1234\), db \(pid 1234\), loader \(pid 4321\),/);
  assert.ok(subject.includes(', over ' + data.labels.duration + '.'), subject);
  assert.ok(subject.includes('Report written 2025-01-31 14:02:11.'), subject);
  const cards = byId.get('totals').findAll(withClass('value')).map((c) => c.textContent);
  assert.deepEqual(cards, ['2', '1', '1', '10.00ms', '0', '0', '0']);
});

test('the timeline has a bar per write, colored by state, and one per sync', () => {
  const {byId} = draw(markup, data);
  const svg = byId.get('timeline-chart').findAll((n) => n.getAttribute('id') === 'timeline-svg');
  assert.equal(svg.length, 1);
  assert.equal(svg[0].findAll(withClass('state-durable')).filter(byTag('rect')).length, 2);
  assert.equal(svg[0].findAll(withClass('sync')).length, 1);
  assert.equal(svg[0].findAll(withClass('durable-mark')).length, 2);
  // The axis is the one duration the script formats: one unit per axis, spelled as the labels.
  const ticks = texts(svg[0]).filter((t) => /^[+-]?[0-9.]+(ns|us|ms|s)$/.test(t));
  assert.ok(ticks.length >= 3, texts(svg[0]).join(' | '));
  assert.equal(new Set(ticks.map((t) => t.replace(/^[+-]?[0-9.]+/, ''))).size, 1, ticks.join(' '));
  assert.match(byId.get('timeline-range').textContent, /^Showing from \+[0-9.]+(ns|us|ms|s) to/);
});

test('hovering a write shows its labelled latency, size and durability', () => {
  const {document, byId} = draw(markup, data);
  const bar = byId.get('timeline-chart').findAll(withClass('write'))[0];
  assert.ok(bar, 'a write bar');
  const tooltip = byId.get('tooltip');
  assert.equal(tooltip.hidden, true);
  document.dispatch('mousemove', {target: bar, clientX: 100, clientY: 100});
  assert.equal(tooltip.hidden, false);
  const write = data.writes[0];
  const shown = tooltip.textContent;
  assert.ok(shown.startsWith('pwrite64 by dd'), shown);
  assert.ok(shown.includes(write.path + ', fd '), 'the file by its path: ' + shown);
  assert.ok(shown.includes(write.labels.latency + ', started at ' + write.labels.start), shown);
  assert.ok(shown.includes(write.labels.bytes + ' at offset '), shown);
  assert.ok(shown.includes(write.labels.durable_after + ' after it returned (via flush)'), shown);
  assert.equal(tooltip.style.left, '114px');
});

test('each sync phase is a segment, labelled, and the phase table uses the summary labels', () => {
  const {byId} = draw(markup, data);
  const chart = byId.get('phase-chart');
  assert.equal(chart.findAll(withClass('phase-seg')).length, 5);
  const shown = texts(chart);
  const sync = data.syncs[0];
  assert.ok(shown.includes(sync.labels.latency), shown.join(' | '));
  assert.ok(shown.includes(sync.labels.phases.journal), shown.join(' | '));
  const table = byId.get('phase-summary').findAll(byTag('table'))[0];
  const rows = table.findAll(byTag('tr'));
  assert.equal(rows.length, 7, 'heading, whole call, five phases');
  const whole = rows[1].findAll(byTag('td')).map((c) => c.textContent);
  const stats = data.summary.fsync_phases.latency_ns.labels;
  assert.deepEqual(whole.slice(0, 6), ['Whole call', stats.p50, stats.p99, stats.max, stats.total,
                                       '100%']);
});

test('a slow write is split into its causes', () => {
  const {byId} = draw(markup, data);
  const chart = byId.get('cause-chart');
  assert.equal(chart.findAll(withClass('cause-seg')).length, 4, 'writeback wait was 0');
  const label = texts(chart)[0];
  assert.equal(label, data.writes[0].labels.start + ' · pwrite64 ' + data.writes[0].labels.bytes +
                          ' · dd (thread 1235)');
});

test('the slowest calls list their named causes with share, stack, waker and commit', () => {
  const {byId} = draw(markup, data);
  const why = data.why[0];
  const blocks = byId.get('why-list').findAll(withClass('why-call'));
  assert.equal(blocks.length, data.why.length);
  assert.equal(blocks[0].findAll(byTag('h4'))[0].textContent,
               'pwrite64 by dd (thread 1235) on /mnt/data/app.log: ' + why.labels.latency +
               ', started at ' + why.labels.start);
  const rows = blocks[0].findAll(byTag('tr')).slice(1);
  assert.equal(rows.length, why.waits.length);
  const cells = (row) => row.findAll(byTag('td')).map((c) => c.textContent);
  const throttle = cells(rows[0]);
  assert.deepEqual(throttle.slice(0, 5), ['dirty-throttle', why.waits[0].labels.ns,
                                          why.waits[0].labels.share, '1', 'balance_dirty_pages']);
  assert.equal(throttle[6], 'balance_dirty_pages < generic_perform_write < ' +
                            'ext4_buffered_write_iter [ext4]');
  const commit = cells(rows[1]);
  assert.equal(commit[0], 'journal-commit');
  assert.ok(commit[5].startsWith('woken by jbd2/loop0-8 (pid 123, kernel thread) in ' +
                                 '__wake_up_common < __wake_up'), commit[5]);
  const c = why.waits[1].commit;
  assert.equal(commit[7], 'journal commit 5 on 7:0 ' + c.labels.start + '..' + c.labels.end +
                          ', ran ' + c.labels.ran + '; FF 7:0 at ' +
                          why.waits[1].flushes[0].labels.issue + ': ' +
                          why.waits[1].flushes[0].labels.device + ' on the device');
  assert.match(byId.get('why-hint').textContent, /^The 1 slowest call with named causes/);
});

test('without named causes the list says how to get them', () => {
  const plain = JSON.parse(JSON.stringify(data));
  plain.why = [];
  const {byId} = draw(markup, plain);
  assert.equal(byId.get('why-list').children.length, 0);
  assert.match(byId.get('why-hint').textContent, /--min-latency/);
});

test('a throttling pause is a dot with its labelled length', () => {
  const {document, byId} = draw(markup, data);
  const dots = byId.get('throttle-chart').findAll(withClass('pause-dot'));
  assert.equal(dots.length, 1);
  assert.ok(byId.get('throttle-hint').textContent.includes(data.labels.throttle_asleep + ' asleep'));
  document.dispatch('mousemove', {target: dots[0], clientX: 10, clientY: 10});
  const pause = data.throttle_pauses[0].labels;
  assert.ok(byId.get('tooltip').textContent.startsWith('paused ' + pause.pause + ' at ' +
                                                       pause.at));
});

test('the O_DIRECT table shows its verdict with labelled sizes', () => {
  const {byId} = draw(markup, data);
  assert.equal(byId.get('direct-io').hidden, false);
  const cells = byId.get('direct-io-table').findAll(byTag('td')).map((c) => c.textContent);
  const verdict = data.summary.direct_io[0];
  assert.deepEqual(cells.slice(0, 4), ['db (pid 1234)', 'device ' + verdict.dev + ', inode 12',
                                       '1', verdict.labels.bytes]);
  assert.equal(cells[cells.length - 1], 'bypassed the page cache');
});

test('the read table has a row per file with where its pages came from', () => {
  const {byId} = draw(markup, data);
  assert.equal(byId.get('read-files').hidden, false);
  const cells = byId.get('read-files-table').findAll(byTag('td')).map((c) => c.textContent);
  const f = data.summary.read_files[0];
  assert.deepEqual(cells, [f.path, '1', '1', f.labels.bytes, '6', '2', '24', f.labels.hit_ratio,
                           f.labels.direct_bytes, f.labels.latency, '0 (0)', f.labels.fault_time,
                           f.labels.requests, f.labels.device_rate]);
});

test('a read is a bar colored by where its pages came from, and its tooltip says so', () => {
  const {document, byId} = draw(markup, data);
  const read = data.reads[0];
  const classes = (id) => byId.get(id).findAll(withClass('read')).filter(byTag('rect'))
                               .map((b) => b.getAttribute('class'));
  // It brought pages in from the device; the legend has both kinds.
  assert.deepEqual(classes('timeline-chart'), ['bar read device has-tip']);
  assert.deepEqual(classes('timeline-legend'), ['bar read device', 'bar read cached']);
  const bar = byId.get('timeline-chart').findAll(withClass('read'))[0];
  document.dispatch('mousemove', {target: bar, clientX: 100, clientY: 100});
  const shown = byId.get('tooltip').textContent;
  assert.ok(shown.startsWith('pread64 by loader'), shown);
  assert.ok(shown.includes(read.labels.latency + ', started at ' + read.labels.start), shown);
  assert.ok(shown.includes(read.pages_from_device + ' from the device, ' + read.pages_cached +
                           ' from the page cache'), shown);
  assert.ok(shown.includes('24 pages past its last byte'), shown);
});

test('a sync with neighbours is a row per neighbour in the neighbours table', () => {
  const {byId} = draw(markup, data);
  assert.equal(byId.get('neighbours').hidden, false);
  const cells = byId.get('neighbours-calls').findAll(byTag('td')).map((c) => c.textContent);
  const sync = data.syncs.find((s) => s.neighbours.length);
  const n = sync.labels.neighbours[0];
  assert.deepEqual(cells.slice(1), [sync.labels.latency, 'bulk (pid 4211, cgroup /batch)',
                                    n.bytes, n.share, n.delay]);
  assert.ok(cells[0].startsWith(sync.syscall + ' ' + sync.comm), cells[0]);
});

test('the container table has a row per container with its labelled figures', () => {
  const {byId} = draw(markup, data);
  assert.equal(byId.get('containers').hidden, false);
  const cells = byId.get('containers-table').findAll(byTag('td')).map((c) => c.textContent);
  const c = data.containers[0];
  assert.deepEqual(cells, [c.name, 'docker', '–', '1', c.labels.durable, '1', c.labels.sync_p99,
                           c.labels.slowest + ' (' + c.slowest_call + ')', '0']);
});

test('a part that cannot draw says so in #errors and the others still draw', () => {
  const broken = JSON.parse(JSON.stringify(data));
  delete broken.syncs[0].labels;
  const {byId} = draw(markup, broken);
  assert.equal(byId.get('errors').hidden, false);
  assert.match(byId.get('errors').textContent, /This page failed to draw: drawPhases/);
  assert.equal(byId.get('cause-chart').findAll(withClass('cause-seg')).length, 4);
});

test('a script that does not parse is reported by the error hook', () => {
  const {byId} = draw(markup.replace("'use strict';", "'use strict'; }"), data);
  assert.equal(byId.get('errors').hidden, false);
  assert.match(byId.get('errors').textContent, /This page failed to draw: SyntaxError/);
});

let failed = 0;
for (const {name, body} of tests) {
  try {
    body();
    console.log('ok   ' + name);
  } catch (e) {
    failed++;
    console.log('FAIL ' + name + '\n' + (e && e.stack ? e.stack : e));
  }
}
console.log(failed ? failed + ' of ' + tests.length + ' failed' : 'all ' + tests.length + ' passed');
process.exit(failed ? 1 : 0);
