// kgate dashboard (docs/dashboard.md): reports/dashboard/*.js, concatenated
// as reports/CMakeLists.txt lists them, draw #kb-data with plain DOM and SVG.
// Data is only ever inserted as text, never parsed as markup.
// This part: the page state, the data and its decoding, small helpers.
var statusEl = document.getElementById('kb-status');
var errors = [];
var PAGE = 24;  // charts drawn at a time in the Charts view
var clipCount = 0;
var state = { view: 'overview', key: -1, shown: PAGE, ready: false, loadMs: 0, sort: 'verdict', desc: false, all: false, rows: 0 };
function noteError(msg) {
  errors.push(String(msg));
  report();
}
window.addEventListener('error', function (e) { noteError(e.message || 'error'); });
window.addEventListener('unhandledrejection', function (e) { noteError('promise: ' + e.reason); });

var SVGNS = 'http://www.w3.org/2000/svg';
var VERDICT_CLASS = { F: 'fail', I: 'inc', P: 'pass', S: 'skip', '': 'old' };
var VERDICT_NAME = { F: 'FAIL', I: 'inconclusive', P: 'pass', S: 'skipped', '': 'not gated' };
var STATUS_NAME = { o: 'ok', b: 'below_target', t: 'throttled', i: 'incorrect', f: 'failed', s: 'skipped' };

var D = JSON.parse(document.getElementById('kb-data').textContent);
var runs = D.runs;  // [label, time|null, timestamp, sha, driver, cuda, [gpu], [rows x6], [verdicts x4], gated, [board]]
var keys = D.keys;
var view = document.getElementById('view');
var filterBox = document.getElementById('filter');
var yModeBox = document.getElementById('ymode');
var rangeBox = document.getElementById('range');
var problemsBox = document.getElementById('problems');
var menus = { gpu: document.getElementById('gpu'), dtype: document.getElementById('dtype'), exp: document.getElementById('exp') };
var tip = document.getElementById('tip');

// ---- small helpers ----
function el(tag, attrs, text) {
  var e = document.createElement(tag);
  if (attrs) for (var a in attrs) if (attrs[a] !== undefined) e.setAttribute(a, attrs[a]);
  if (text !== undefined) e.textContent = text;
  return e;
}
// Cells of `tag` appended to tr: each a text, or [attrs, text].
function cells(tr, tag, list) {
  list.forEach(function (c) { tr.appendChild(Array.isArray(c) ? el(tag, c[0], c[1]) : el(tag, null, c)); });
  return tr;
}
// A table in the view with its header row; its rows go into the tbody returned.
function table(attrs, heads, parent) {
  var t = (parent || view).appendChild(el('table', attrs));
  cells(t.appendChild(el('thead')).appendChild(el('tr')), 'th', heads);
  return t.appendChild(el('tbody'));
}
function sv(tag, attrs, text) {
  var e = document.createElementNS(SVGNS, tag);
  if (attrs) for (var a in attrs) e.setAttribute(a, attrs[a]);
  if (text !== undefined) e.textContent = text;
  return e;
}
function show(v) {
  if (v === null || v === undefined || !isFinite(v)) return '-';
  var a = Math.abs(v);
  if (a !== 0 && (a >= 1e7 || a < 1e-3)) return v.toPrecision(4);
  if (a >= 1000) return v.toFixed(0);
  return String(parseFloat(v.toPrecision(4)));
}
function pct(f) { return isFinite(f) ? (f * 100).toFixed(1) + '%' : '-'; }
function gpuLabel(g) {
  var gp = D.gpus[g];
  var s = gp[0] ? gp[0].replace(/^NVIDIA /, '') : '(no arch)';
  if (gp[1] && gp[1] !== 'cuda') s += ' (' + gp[1] + ')';
  return s;
}
function boardLabel(b) {
  var bd = D.boards[b];
  return bd[0] + (bd[1] && bd[1] !== 'cuda' ? ' ' + bd[1] : '');
}
function keyLabel(k) {
  return k.n + (k.s ? ' [' + k.s + ']' : '') + ' ' + k.d + ' ' + k.m;
}
function iso(t, full) {
  if (t === null || t === undefined) return '';
  var s = new Date(t * 1000).toISOString();
  return full ? s.slice(0, 16).replace('T', ' ') : s.slice(0, 10);
}
function tokens() {
  return filterBox.value.toLowerCase().split(/\s+/).filter(function (t) { return t; });
}
function matches(text, toks) {
  toks = toks || tokens();
  for (var i = 0; i < toks.length; i++) if (text.indexOf(toks[i]) < 0) return false;
  return true;
}
// Steps [[i, v], ...] (v null = none) as one value per point.
function expand(steps, n) {
  var out = new Float64Array(n).fill(NaN);
  for (var s = 0; s < steps.length; s++) {
    var end = s + 1 < steps.length ? steps[s + 1][0] : n;
    var v = steps[s][1] === null ? NaN : steps[s][1];
    for (var i = steps[s][0]; i < end; i++) out[i] = v;
  }
  return out;
}
function lastStep(steps) { return steps.length && steps[steps.length - 1][1] !== null ? steps[steps.length - 1][1] : NaN; }

// A key's points, decoded on first use (a year of history is ~100 000 of them).
function decode(k) {
  if (k.dec) return k.dec;
  var n = k.v.length, r = new Int32Array(n), x = new Float64Array(n), run = 0;
  for (var i = 0; i < n; i++) {
    run += k.r[i];
    r[i] = run;
    x[i] = D.timeAxis ? runs[run][1] : run;
  }
  var att = {};
  for (var a = 0; a < k.at.length; a++) (att[k.at[a][0]] = att[k.at[a][0]] || []).push(k.at[a]);
  k.dec = { n: n, run: r, x: x, roof: expand(k.rf, n), target: expand(k.tg, n), att: att, board: expand(k.bd || [], n), samples: expand(k.sa || [], n) };
  return k.dec;
}
// A value on the chosen axis: the metric itself, or its fraction of the
// point's roofline (for times, roofline / value: 1.0 is the limit either way).
function onAxis(k, v, roof, frac) {
  if (v === null || !isFinite(v)) return NaN;
  if (!frac) return v;
  if (!isFinite(roof) || roof <= 0 || v <= 0) return NaN;
  return k.lo ? roof / v : v / roof;
}
function newestFraction(k) {
  var n = k.v.length;
  if (!n) return NaN;
  return onAxis(k, k.v[n - 1], lastStep(k.rf), true);
}

// The point of key k at run r, -1 if none.
function pointAt(k, r) {
  var run = decode(k).run, a = 0, b = run.length - 1;
  while (a < b) { var m = (a + b) >> 1; if (run[m] < r) a = m + 1; else b = m; }
  return run[a] === r ? a : -1;
}
// ---- per key: what the overview sorts and filters on ----
var DTYPE_ALIAS = { bfloat16: 'bf16', float16: 'fp16', float32: 'fp32', float8_e4m3fn: 'fp8' };
var sameKey = {};  // experiment, shape, dtype and metric -> the key on each GPU
keys.forEach(function (k, i) {
  var id = [k.n, k.s, k.d, k.m].join('\u001f'), n = k.v.length, bs = {};
  (sameKey[id] = sameKey[id] || []).push(i);
  k.id = id;
  (k.bd || []).forEach(function (s) { if (s[1] !== null) bs[s[1]] = 1; });
  k.at.forEach(function (a) { if (a.length > 4) bs[a[4]] = 1; });
  k.boards = Object.keys(bs).map(Number);  // the GPUs (by UUID) its rows name
  k.text = (keyLabel(k) + ' ' + (k['var'] || '') + ' ' + gpuLabel(k.g) + ' ' + (DTYPE_ALIAS[k.d] || '') + ' ' +
    k.boards.map(boardLabel).join(' ')).toLowerCase();
  k.chg = n && k.b[n - 1] ? k.v[n - 1] / k.b[n - 1] - 1 : NaN;  // the newest run against its baseline
  k.bad = k.lo ? k.chg : -k.chg;  // the same, larger = worse
  k.rank = k.vd ? 'FIPS'.indexOf(k.vd) : 4;
  // Probes measure the machine; keys too new for the history rule cannot regress yet.
  k.grp = /probe/.test(k.n) ? 2 : k.vd === 'I' && k.rule === 'too little history' ? 1 : 0;
  var j = n;
  if (k.vd === 'F') while (j > 0 && k.ve.charAt(j - 1) === 'F') j--;
  k.since = j < n ? j : -1;  // the first point of the newest unbroken run of FAILs
});
var gpuModels = [], dtypes = [], experiments = [];
keys.forEach(function (k) {
  [[gpuModels, D.gpus[k.g][0]], [dtypes, k.d], [experiments, k.n]].forEach(function (p) {
    if (p[0].indexOf(p[1]) < 0) p[0].push(p[1]);
  });
});
