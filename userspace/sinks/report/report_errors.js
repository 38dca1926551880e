// SPDX-License-Identifier: Apache-2.0
// First, on its own: a page that fails to draw says so in #errors instead of staying blank.
window.addEventListener('error', function (e) {
  var box = document.getElementById('errors');
  var line = document.createElement('div');
  line.textContent = 'This page failed to draw: ' + (e.message || 'error') +
      (e.lineno ? ' (line ' + e.lineno + ')' : '');
  if (box) { box.appendChild(line); box.hidden = false; }
});
