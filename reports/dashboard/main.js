// kgate dashboard: routing by the URL hash, the page's own report, and
// the start. See data.js.
// ---- state: the hash names the view (#overview, #charts, #runs, #input, #key/N) ----
function route() {
  var h = location.hash.replace(/^#/, '');
  var m = /^key\/(\d+)$/.exec(h);
  if (m) { state.view = 'key'; state.key = +m[1]; }
  else state.view = ['overview', 'charts', 'runs', 'input'].indexOf(h) >= 0 ? h : 'overview';
  state.shown = PAGE;
  render();
  window.scrollTo(0, 0);
}

// What a test (or a curious reader) can check: the page's own account of
// what it drew and of any script error.
function report() {
  if (!statusEl) return;
  var keys = (typeof D === 'object' && D && D.keys) || [];
  var visible = 0;
  var body = document.querySelector('#view table tbody');
  if (body) body.childNodes.forEach(function (tr) { visible += !tr.hidden; });
  statusEl.setAttribute('data-state', state.ready ? 'ready' : 'loading');
  statusEl.setAttribute('data-view', state.view);
  statusEl.setAttribute('data-charts', String(document.querySelectorAll('#view svg.kb-chart').length));
  statusEl.setAttribute('data-charts-with-points', String(document.querySelectorAll('#view svg.kb-chart:not([data-points="0"])').length));
  statusEl.setAttribute('data-rows', String(visible));
  statusEl.setAttribute('data-keys', String(keys.length));
  statusEl.setAttribute('data-errors', String(errors.length));
  statusEl.setAttribute('data-error', errors.length ? errors[0] : '');
  statusEl.setAttribute('data-load-ms', String(Math.round(state.loadMs)));
  statusEl.textContent = state.view + ': ' + errors.length + ' error(s)';
}

filterBox.addEventListener('input', function () {
  if (state.view === 'charts') { state.shown = PAGE; render(); } else applyFilter();
});
problemsBox.addEventListener('change', function () {
  if (state.view === 'charts') render(); else applyFilter();
});
yModeBox.addEventListener('change', render);
rangeBox.addEventListener('change', render);
window.addEventListener('hashchange', route);
route();
state.ready = true;
state.loadMs = performance.now();
if (performance.mark) performance.mark('kb-ready');
report();
