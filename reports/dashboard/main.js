// kgate dashboard: routing by the URL hash, the page's own report, and
// the start. See data.js.
// ---- state: the hash names the view (#overview, #charts, #runs, #input,
// #key/N) and, after '?', the filter, menus and sort: a link shares them ----
var CONTROLS = { q: filterBox, gpu: menus.gpu, dtype: menus.dtype, exp: menus.exp, only: problemsBox, y: yModeBox, range: rangeBox };
function route() {
  var h = location.hash.replace(/^#/, ''), q = h.indexOf('?');
  if (q >= 0) {
    var p = new URLSearchParams(h.slice(q + 1)), sort = p.get('sort') || 'verdict';
    for (var c in CONTROLS) {
      var box = CONTROLS[c];
      if (box.type === 'checkbox') box.checked = p.get(c) === '1';
      else box.value = p.get(c) || (box.tagName === 'SELECT' ? box.options[0].value : '');
    }
    state.desc = sort.charAt(0) === '-';
    state.sort = sort.replace(/^-/, '');
    h = h.slice(0, q);
  }
  var m = /^key\/(\d+)$/.exec(h), c = /^compare\/(-?\d+)\/(-?\d+)$/.exec(h);
  if (m) { state.view = 'key'; state.key = +m[1]; }
  else if (c) { state.view = 'compare'; state.a = +c[1]; state.b = +c[2]; }
  else state.view = ['overview', 'charts', 'runs', 'input'].indexOf(h) >= 0 ? h : 'overview';
  state.shown = PAGE;
  state.all = false;
  render();
  window.scrollTo(0, 0);
}
// The hash for the page as it is drawn (written without a hashchange).
function syncUrl() {
  var p = new URLSearchParams();
  for (var c in CONTROLS) {
    var box = CONTROLS[c], v = box.type === 'checkbox' ? (box.checked ? '1' : '') : box.value;
    if (v && v !== (box.tagName === 'SELECT' ? box.options[0].value : '')) p.set(c, v);
  }
  if (state.sort !== 'verdict' || state.desc) p.set('sort', (state.desc ? '-' : '') + state.sort);
  var v = state.view === 'key' ? 'key/' + state.key : state.view === 'compare' ? 'compare/' + state.a + '/' + state.b : state.view;
  var s = p.toString(), h = '#' + v + (s ? '?' + s : '');
  if (h !== location.hash && (location.hash || h !== '#overview')) history.replaceState(null, '', h);
}

// What a test (or a curious reader) can check: the page's own account of
// what it drew and of any script error.
function report() {
  if (!statusEl) return;
  var keys = (typeof D === 'object' && D && D.keys) || [];
  statusEl.setAttribute('data-state', state.ready ? 'ready' : 'loading');
  statusEl.setAttribute('data-view', state.view);
  statusEl.setAttribute('data-charts', String(document.querySelectorAll('#view svg.kb-chart').length));
  statusEl.setAttribute('data-charts-with-points', String(document.querySelectorAll('#view svg.kb-chart:not([data-points="0"])').length));
  statusEl.setAttribute('data-rows', String(state.rows));
  statusEl.setAttribute('data-keys', String(keys.length));
  statusEl.setAttribute('data-errors', String(errors.length));
  statusEl.setAttribute('data-error', errors.length ? errors[0] : '');
  statusEl.setAttribute('data-load-ms', String(Math.round(state.loadMs)));
  statusEl.textContent = state.view + ': ' + errors.length + ' error(s)';
}

[[menus.gpu, gpuModels, 'every GPU'], [menus.dtype, dtypes, 'every dtype'], [menus.exp, experiments, 'every experiment']].forEach(function (m) {
  m[0].appendChild(el('option', { value: '' }, m[2]));
  m[1].sort().forEach(function (v) { m[0].appendChild(el('option', { value: v }, v.replace(/^NVIDIA /, '') || '(no arch)')); });
});
for (var c in CONTROLS) {
  CONTROLS[c].addEventListener(c === 'q' ? 'input' : 'change', function () {
    state.shown = PAGE;
    state.all = false;
    render();
  });
}
window.addEventListener('hashchange', route);
route();
state.ready = true;
state.loadMs = performance.now();
if (performance.mark) performance.mark('kb-ready');
report();
