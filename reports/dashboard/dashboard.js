// kgate dashboard: draws the history embedded in #kb-data (written by
// reports/dashboard_html.cpp) as an overview, per-key trend charts (SVG) and
// a list of runs. No network, no library: plain DOM and SVG.
// Data from the CSV is only ever inserted as text (textContent, attribute
// values), never parsed as markup.
(function () {
  'use strict';
  var statusEl = document.getElementById('kb-status');
  var errors = [];
  var PAGE = 24;  // charts drawn at a time in the Charts view
  var clipCount = 0;
  var state = { view: 'overview', key: -1, shown: PAGE, ready: false, loadMs: 0 };
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
  var runs = D.runs;  // [label, time|null, timestamp, sha, driver, cuda, [gpu], [rows x6], [verdicts x4], gated]
  var keys = D.keys;
  var view = document.getElementById('view');
  var filterBox = document.getElementById('filter');
  var yModeBox = document.getElementById('ymode');
  var rangeBox = document.getElementById('range');
  var problemsBox = document.getElementById('problems');
  var tip = document.getElementById('tip');

  // ---- small helpers ----
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) for (var a in attrs) if (attrs[a] !== undefined) e.setAttribute(a, attrs[a]);
    if (text !== undefined) e.textContent = text;
    return e;
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
    k.dec = { n: n, run: r, x: x, roof: expand(k.rf, n), target: expand(k.tg, n), att: att, board: expand(k.bd || [], n) };
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

  // ---- rows of the overview: one per experiment, shape, dtype and metric ----
  var rowsByKey = [], rowOrder = [], rowIndex = {};
  keys.forEach(function (k, i) {
    var id = [k.n, k.s, k.d, k.m].join('\u001f');
    if (!(id in rowIndex)) {
      rowIndex[id] = rowOrder.length;
      rowOrder.push({ n: k.n, s: k.s, d: k.d, m: k.m, cells: {}, text: '' });
    }
    var row = rowOrder[rowIndex[id]];
    row.cells[k.g] = i;
    rowsByKey[i] = rowIndex[id];
    k.text = (keyLabel(k) + ' ' + (k['var'] || '') + ' ' + gpuLabel(k.g)).toLowerCase();
  });
  rowOrder.forEach(function (row) {
    row.text = [row.n, row.s, row.d, row.m].join(' ').toLowerCase();
    row.problem = false;
    for (var g in row.cells) { var vd = keys[row.cells[g]].vd; if (vd === 'F' || vd === 'I') row.problem = true; }
  });
  var usedGpus = [];
  D.gpus.forEach(function (g, i) { if (keys.some(function (k) { return k.g === i; })) usedGpus.push(i); });

  // ---- views ----
  function render() {
    hideTip();
    view.textContent = '';
    document.querySelectorAll('nav a').forEach(function (a) {
      a.classList.toggle('on', a.getAttribute('href') === '#' + state.view);
    });
    if (state.view === 'key') renderKey(state.key);
    else if (state.view === 'charts') renderCharts();
    else if (state.view === 'runs') renderRuns();
    else if (state.view === 'input') renderInput();
    else renderOverview();
    report();
  }

  function renderOverview() {
    view.appendChild(el('div', { 'class': 'count', id: 'count' }));
    view.appendChild(el('div', { 'class': 'legend' },
      'Each cell: the newest run\'s fraction of its roofline (the value where there is no roofline), ' +
      'coloured by the gate\'s verdict; click it for the trend.'));
    var t = el('table', { 'class': 'overview', id: 'overview' });
    var hr = el('tr');
    ['experiment', 'shape', 'dtype', 'metric'].forEach(function (h) { hr.appendChild(el('th', null, h)); });
    usedGpus.forEach(function (g) { hr.appendChild(el('th', { 'class': 'n' }, gpuLabel(g))); });
    t.appendChild(el('thead')).appendChild(hr);
    var body = el('tbody');
    rowOrder.forEach(function (row, ri) {
      var tr = el('tr', { 'data-row': ri });
      tr.appendChild(el('td', null, row.n));
      tr.appendChild(el('td', null, row.s));
      tr.appendChild(el('td', null, row.d));
      tr.appendChild(el('td', null, row.m));
      usedGpus.forEach(function (g) {
        var ki = row.cells[g];
        if (ki === undefined) { tr.appendChild(el('td', { 'class': 'cell none' })); return; }
        var k = keys[ki], f = newestFraction(k), n = k.v.length;
        var td = el('td', { 'class': 'cell ' + VERDICT_CLASS[k.vd] });
        var text = isFinite(f) ? pct(f) : n && k.v[n - 1] !== null ? show(k.v[n - 1]) : STATUS_NAME[k.st.charAt(n - 1)] || '-';
        var a = el('a', { href: '#key/' + ki }, text);
        var lastRun = n ? runs[decodeRunOfLast(k)] : null;
        a.title = keyLabel(k) + ' @ ' + gpuLabel(k.g) + '\n' + VERDICT_NAME[k.vd] + (k.why ? ': ' + k.why : '') +
          (lastRun ? '\nnewest: run ' + lastRun[0] + (lastRun[2] ? ' (' + lastRun[2] + ')' : '') : '') +
          '\nvalue ' + show(n ? k.v[n - 1] : null) + ', target ' + show(lastStep(k.tg));
        td.appendChild(a);
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    t.appendChild(body);
    view.appendChild(t);
    applyFilter();
  }
  function decodeRunOfLast(k) {
    var s = 0;
    for (var i = 0; i < k.r.length; i++) s += k.r[i];
    return s;
  }

  function renderCharts() {
    var toks = tokens(), only = problemsBox.checked, list = [];
    keys.forEach(function (k, i) {
      if (matches(k.text, toks) && (!only || k.vd === 'F' || k.vd === 'I')) list.push(i);
    });
    view.appendChild(el('div', { 'class': 'count', id: 'count' },
      list.length + ' of ' + keys.length + ' keys match' + (list.length > state.shown ? '; the first ' + state.shown + ' are drawn' : '')));
    view.appendChild(legend());
    var grid = el('div', { 'class': 'grid' });
    list.slice(0, state.shown).forEach(function (i) { grid.appendChild(card(i, 440, 170)); });
    view.appendChild(grid);
    if (list.length > state.shown) {
      var more = el('button', { 'class': 'more' }, 'draw ' + Math.min(PAGE, list.length - state.shown) + ' more');
      more.addEventListener('click', function () { state.shown += PAGE; render(); });
      view.appendChild(more);
    }
  }

  function card(i, w, h) {
    var k = keys[i], c = el('div', { 'class': 'card' });
    var h3 = el('h3');
    h3.appendChild(el('a', { href: '#key/' + i }, keyLabel(k)));
    c.appendChild(h3);
    var sub = el('div', { 'class': 'sub' });
    sub.appendChild(el('span', { 'class': 'badge ' + VERDICT_CLASS[k.vd] }, VERDICT_NAME[k.vd]));
    sub.appendChild(document.createTextNode(' ' + gpuLabel(k.g) + (k.why ? ' \u2014 ' + k.why : '')));
    c.appendChild(sub);
    c.appendChild(chart(k, w, h));
    return c;
  }

  function legend() {
    var d = el('div', { 'class': 'legend' });
    function item(color, text, hollow) {
      var i = el('i');
      i.style.background = hollow ? '#fff' : color;
      if (hollow) i.style.border = '1.5px solid ' + color;
      d.appendChild(i);
      d.appendChild(document.createTextNode(text));
    }
    item('#2e7d32', 'pass');
    item('#d98200', 'inconclusive');
    item('#c62828', 'FAIL');
    item('#d98200', 'throttled', true);
    item('#6a1b9a', 'attempt (re-measured)', true);
    d.appendChild(document.createTextNode(
      ' \u00b7 dashed: baseline (median of the last ' + D.window + ' runs), shaded: the band a single run may ' +
      'move before rule 3 fails it (the larger of ' + pct(D.minGap) + ' and what the noise explains), ' +
      'dotted: target, ticks on top: a new git_sha, \u00d7: failed or incorrect row' +
      (D.boards && D.boards.length ? ', thin dashed vertical line: the key\'s runs moved to another board (GPU), judged by the gate\'s board rule.' : '.')));
    return d;
  }

  function renderKey(i) {
    var k = keys[i];
    if (!k) { view.appendChild(el('p', null, 'No such key.')); return; }
    var dec = decode(k);
    view.appendChild(el('h2', null, keyLabel(k) + ' @ ' + gpuLabel(k.g)));
    var p = el('p', { 'class': 'why' });
    p.appendChild(el('span', { 'class': 'badge ' + VERDICT_CLASS[k.vd] }, VERDICT_NAME[k.vd]));
    p.appendChild(document.createTextNode(' ' + (k.why || (k.vd ? '' : 'not in the newest run of this GPU (nor in the one before)')) +
      (k['var'] ? ' \u00b7 variant ' + k['var'] : '') + (k.tsrc ? ' \u00b7 target from ' + k.tsrc : '')));
    view.appendChild(p);
    var missing = [];
    if (!k.tg.some(function (s) { return s[1] !== null; })) missing.push('no target');
    if (!k.rf.some(function (s) { return s[1] !== null; })) missing.push('no roofline (the fraction axis is empty)');
    if (dec.n < 2) missing.push('one run only: no trend yet');
    if (missing.length) view.appendChild(el('p', { 'class': 'count' }, 'Missing: ' + missing.join('; ') + '.'));
    view.appendChild(legend());
    view.appendChild(chart(k, Math.max(600, Math.min(1200, view.clientWidth - 20)), 320));
    var sib = [];
    var row = rowOrder[rowsByKey[i]];
    for (var g in row.cells) if (row.cells[g] !== i) sib.push(row.cells[g]);
    if (sib.length) {
      view.appendChild(el('h2', null, 'The same on other GPUs'));
      var grid = el('div', { 'class': 'grid' });
      sib.forEach(function (j) { grid.appendChild(card(j, 440, 170)); });
      view.appendChild(grid);
    }
    view.appendChild(el('h2', null, 'Newest runs'));
    var t = el('table', { id: 'points' });
    var hr = el('tr');
    ['run', 'time', 'git_sha', 'value', 'roofline fraction', 'baseline', 'target', 'row status', 'verdict', 'attempts']
      .forEach(function (h) { hr.appendChild(el('th', null, h)); });
    t.appendChild(el('thead')).appendChild(hr);
    var body = el('tbody');
    for (var j = dec.n - 1; j >= 0 && j >= dec.n - 30; j--) {
      var run = runs[dec.run[j]], vd = k.ve.charAt(j), tr = el('tr');
      tr.appendChild(el('td', null, run[0]));
      tr.appendChild(el('td', null, run[2]));
      tr.appendChild(el('td', { 'class': 'sha' }, run[3] || '-'));
      tr.appendChild(el('td', { 'class': 'n' }, show(k.v[j])));
      tr.appendChild(el('td', { 'class': 'n' }, pct(onAxis(k, k.v[j], dec.roof[j], true))));
      tr.appendChild(el('td', { 'class': 'n' }, show(k.b[j])));
      tr.appendChild(el('td', { 'class': 'n' }, show(dec.target[j])));
      tr.appendChild(el('td', null, STATUS_NAME[k.st.charAt(j)]));
      tr.appendChild(el('td', { 'class': VERDICT_CLASS[vd] }, VERDICT_NAME[vd]));
      tr.appendChild(el('td', null, (dec.att[j] || []).map(function (a) {
        return (a[1] ? '#' + a[1] : 'repeat') + ' ' + show(a[2]) + ' (' + STATUS_NAME[a[3]] + ')';
      }).join(', ')));
      body.appendChild(tr);
    }
    t.appendChild(body);
    view.appendChild(t);
  }

  function renderRuns() {
    view.appendChild(el('div', { 'class': 'count', id: 'count' }));
    var t = el('table', { id: 'runs' });
    var hr = el('tr');
    ['time', 'run', 'GPU', 'driver', 'CUDA', 'git_sha', 'rows', 'gate verdict'].forEach(function (h) { hr.appendChild(el('th', null, h)); });
    t.appendChild(el('thead')).appendChild(hr);
    var body = el('tbody');
    for (var r = runs.length - 1; r >= 0; r--) {
      var run = runs[r], tr = el('tr', { 'data-row': r });
      var gpus = run[6].map(gpuLabel).join(', ');
      var rowText = [];
      'obtifs'.split('').forEach(function (s, j) { if (run[7][j]) rowText.push(run[7][j] + ' ' + STATUS_NAME[s]); });
      var v = run[8], cls = v[0] ? 'fail' : v[1] ? 'inc' : v[2] ? 'pass' : 'skip';
      var vt = (v[0] ? 'FAIL ' + v[0] + ' \u00b7 ' : '') + (v[1] ? v[1] + ' inconclusive \u00b7 ' : '') + v[2] + ' pass' +
        (v[3] ? ' \u00b7 ' + v[3] + ' skipped' : '') + (run[9] ? ' (kgate check)' : '');
      tr.appendChild(el('td', null, run[2] || '-'));
      tr.appendChild(el('td', null, run[0]));
      tr.appendChild(el('td', null, gpus));
      tr.appendChild(el('td', null, run[4] || '-'));
      tr.appendChild(el('td', null, run[5] || '-'));
      tr.appendChild(el('td', { 'class': 'sha' }, run[3] || '-'));
      tr.appendChild(el('td', null, rowText.join(', ')));
      tr.appendChild(el('td', { 'class': cls }, vt));
      tr.kbText = [run[0], run[2], gpus, run[3], run[4], run[5]].join(' ').toLowerCase();
      tr.kbProblem = v[0] > 0 || v[1] > 0;
      body.appendChild(tr);
    }
    t.appendChild(body);
    view.appendChild(t);
    applyFilter();
  }

  function renderInput() {
    view.appendChild(el('h2', null, 'Files read'));
    var ul = el('ul');
    D.inputs.forEach(function (f) { ul.appendChild(el('li', null, f)); });
    view.appendChild(ul);
    view.appendChild(el('p', null, D.rows + ' rows, ' + runs.length + ' runs, ' + keys.length + ' keys, ' +
      usedGpus.length + ' GPUs; generated ' + D.generated + '.'));
    view.appendChild(el('h2', null, D.warnings.length + ' input warning(s)'));
    var w = el('ul');
    D.warnings.forEach(function (x) { w.appendChild(el('li', null, x)); });
    view.appendChild(w);
  }

  // Hides the rows of the current table that the filter leaves out.
  function applyFilter() {
    var toks = tokens(), only = problemsBox.checked, shown = 0, total = 0;
    var ov = document.getElementById('overview'), rt = document.getElementById('runs');
    if (ov) {
      ov.tBodies[0].childNodes.forEach(function (tr) {
        var row = rowOrder[+tr.getAttribute('data-row')];
        var on = matches(row.text, toks) && (!only || row.problem);
        tr.hidden = !on;
        total++;
        shown += on;
      });
    } else if (rt) {
      rt.tBodies[0].childNodes.forEach(function (tr) {
        var on = matches(tr.kbText, toks) && (!only || tr.kbProblem);
        tr.hidden = !on;
        total++;
        shown += on;
      });
    }
    var c = document.getElementById('count');
    if (c && (ov || rt)) c.textContent = shown + ' of ' + total + (ov ? ' rows' : ' runs') + ' shown';
    report();
  }

  // ---- the trend chart ----
  function niceStep(span, n) {
    var raw = span / n, p = Math.pow(10, Math.floor(Math.log10(raw))), m = raw / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 2.5 ? 2.5 : m <= 5 ? 5 : 10) * p;
  }
  function timeStep(span) {
    var H = 3600, Dy = 86400, c = [H, 3 * H, 6 * H, 12 * H, Dy, 2 * Dy, 7 * Dy, 14 * Dy, 30 * Dy, 61 * Dy, 91 * Dy, 182 * Dy, 365 * Dy];
    for (var i = 0; i < c.length; i++) if (span / c[i] <= 7) return c[i];
    return c[c.length - 1] * Math.ceil(span / (7 * c[c.length - 1]));
  }
  function circlePath(cx, cy, r) {
    return 'M' + (cx - r).toFixed(1) + ' ' + cy.toFixed(1) + 'a' + r + ' ' + r + ' 0 1 0 ' + 2 * r + ' 0a' + r + ' ' + r + ' 0 1 0 ' + -2 * r + ' 0';
  }

  function chart(k, W, H) {
    var dec = decode(k), frac = yModeBox.value === 'fraction', n = dec.n;
    var svg = sv('svg', { 'class': 'kb-chart', width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img' });
    var L = 58, R = 10, T = 18, B = 22, pw = W - L - R, ph = H - T - B;
    // The points in the chosen range.
    var first = 0;
    var days = +rangeBox.value;
    if (days > 0 && n) {
      var lim = D.timeAxis ? dec.x[n - 1] - days * 86400 : dec.x[n - 1] - days;
      while (first < n - 1 && dec.x[first] < lim) first++;
    }
    var ys = [], lo = Infinity, hi = -Infinity;
    for (var i = first; i < n; i++) {
      var y = onAxis(k, k.v[i], dec.roof[i], frac);
      ys[i] = y;
      if (isFinite(y)) { lo = Math.min(lo, y); hi = Math.max(hi, y); }
      (dec.att[i] || []).forEach(function (a) {
        var ya = onAxis(k, a[2], dec.roof[i], frac);
        if (isFinite(ya)) { lo = Math.min(lo, ya); hi = Math.max(hi, ya); }
      });
    }
    var drawn = 0;
    if (!isFinite(lo)) {
      svg.appendChild(sv('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', 'class': 'empty' },
        frac ? 'no roofline for this key: switch the y axis to the metric' : 'no measured value in this range'));
      svg.setAttribute('data-points', '0');
      return svg;
    }
    // Baseline band and target widen the range when they are near the data.
    var base = [], bandLo = [], bandHi = [], tgt = [];
    for (i = first; i < n; i++) {
      var b = k.b[i], e = k.e[i];
      if (b !== null && e !== null) {
        // (A band wider than the baseline itself reaches down to 0, not below.)
        var b0 = onAxis(k, b, dec.roof[i], frac), b1 = onAxis(k, b * Math.max(1 - e, 1e-3), dec.roof[i], frac), b2 = onAxis(k, b * (1 + e), dec.roof[i], frac);
        base[i] = b0; bandLo[i] = Math.min(b1, b2); bandHi[i] = Math.max(b1, b2);
      }
      tgt[i] = onAxis(k, dec.target[i], dec.roof[i], frac);
    }
    var span = hi - lo || Math.abs(hi) * 0.1 || 1;
    // (Not the band: on a short history it is wide and would flatten the data.)
    for (i = first; i < n; i++) {
      [base[i], tgt[i]].forEach(function (v) {
        if (v !== undefined && isFinite(v) && v > lo - 1.5 * span && v < hi + 1.5 * span) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
      });
    }
    if (hi - lo < 1e-12 * Math.max(1, Math.abs(hi))) { lo -= Math.abs(lo) * 0.05 || 1; hi += Math.abs(hi) * 0.05 || 1; }
    var pad = (hi - lo) * 0.06;
    lo -= pad; hi += pad;
    var x0 = dec.x[first], x1 = dec.x[n - 1];
    if (x1 - x0 <= 0) { var w0 = D.timeAxis ? 43200 : 1; x0 -= w0; x1 += w0; }
    function X(x) { return L + pw * (x - x0) / (x1 - x0); }
    function Y(y) { return T + ph * (1 - (y - lo) / (hi - lo)); }

    // Axes.
    var g = sv('g');
    var ys_ = niceStep(hi - lo, 4);
    for (var yt = Math.ceil(lo / ys_) * ys_; yt <= hi; yt += ys_) {
      g.appendChild(sv('line', { x1: L, x2: W - R, y1: Y(yt), y2: Y(yt), 'class': 'gl' }));
      g.appendChild(sv('text', { x: L - 4, y: Y(yt) + 3, 'text-anchor': 'end', 'class': 'ax' }, frac ? (yt * 100).toFixed(ys_ < 0.01 ? 1 : 0) + '%' : show(yt)));
    }
    var xs_ = D.timeAxis ? timeStep(x1 - x0) : Math.max(1, niceStep(x1 - x0, 6));
    for (var xt = Math.ceil(x0 / xs_) * xs_; xt <= x1; xt += xs_) {
      if (!D.timeAxis && (xt < 0 || xt >= runs.length)) continue;  // no such run
      var lab = D.timeAxis ? (x1 - x0 < 2 * 86400 ? iso(xt, true).slice(5) : iso(xt).slice(x1 - x0 > 300 * 86400 ? 0 : 5)) : 'run ' + (xt + 1);
      g.appendChild(sv('text', { x: X(xt), y: H - 6, 'text-anchor': 'middle', 'class': 'ax' }, lab));
    }
    g.appendChild(sv('text', { x: 4, y: 9, 'class': 'ax' }, frac ? 'fraction of roofline' : k.m));
    svg.appendChild(g);

    // Everything inside the plot area is clipped to it.
    var clipId = 'kbclip' + (++clipCount);
    svg.appendChild(sv('clipPath', { id: clipId })).appendChild(sv('rect', { x: L, y: T - 7, width: pw + 7, height: ph + 7 }));
    var plot = sv('g', { 'clip-path': 'url(#' + clipId + ')' });
    svg.appendChild(plot);
    // Band and baseline, in segments where the baseline exists.
    var bandPath = '', basePath = '', seg = [];
    function flush() {
      if (seg.length) {
        var up = seg.map(function (j) { return X(dec.x[j]).toFixed(1) + ' ' + Y(bandHi[j]).toFixed(1); });
        var dn = seg.slice().reverse().map(function (j) { return X(dec.x[j]).toFixed(1) + ' ' + Y(bandLo[j]).toFixed(1); });
        bandPath += 'M' + up.join('L') + 'L' + dn.join('L') + 'Z';
        basePath += 'M' + seg.map(function (j) { return X(dec.x[j]).toFixed(1) + ' ' + Y(base[j]).toFixed(1); }).join('L');
      }
      seg = [];
    }
    for (i = first; i < n; i++) {
      if (base[i] !== undefined && isFinite(base[i]) && isFinite(bandLo[i]) && isFinite(bandHi[i])) seg.push(i);
      else flush();
    }
    flush();
    if (bandPath) plot.appendChild(sv('path', { d: bandPath, 'class': 'band' }));
    if (basePath) plot.appendChild(sv('path', { d: basePath, 'class': 'base' }));
    var tp = '', pen = false;
    for (i = first; i < n; i++) {
      if (isFinite(tgt[i])) { tp += (pen ? 'L' : 'M') + X(dec.x[i]).toFixed(1) + ' ' + Y(tgt[i]).toFixed(1); pen = true; } else pen = false;
    }
    if (tp) plot.appendChild(sv('path', { d: tp, 'class': 'tgt' }));

    // Commit changes: a tick on top (and a faint line in big charts).
    var shaPath = '';
    for (i = Math.max(first, 1); i < n; i++) {
      var s0 = runs[dec.run[i - 1]][3], s1 = runs[dec.run[i]][3];
      if (s0 && s1 && s0 !== s1) {
        var xx = X(dec.x[i]).toFixed(1);
        shaPath += 'M' + xx + ' ' + T + 'v-6';
      }
    }
    if (shaPath) plot.appendChild(sv('path', { d: shaPath, 'class': 'sha' }));

    // The values: a line through them, a dot per run coloured by verdict.
    var vp = '', dots = { P: '', I: '', F: '', S: '' }, thr = '', bad = '', att = '';
    pen = false;
    for (i = first; i < n; i++) {
      var st = k.st.charAt(i), vd = k.ve.charAt(i), px = X(dec.x[i]);
      if (isFinite(ys[i])) {
        var py = Y(ys[i]);
        vp += (pen ? 'L' : 'M') + px.toFixed(1) + ' ' + py.toFixed(1);
        pen = true;
        if (st === 't') thr += circlePath(px, py, 3);
        else dots[vd] += circlePath(px, py, vd === 'F' ? 3.8 : vd === 'I' ? 3 : 2.3);
        drawn++;
      } else if (st === 'f' || st === 'i') {
        var by = T + ph - 4;
        bad += 'M' + (px - 3) + ' ' + (by - 3) + 'l6 6m0 -6l-6 6';
        drawn++;
      }
      (dec.att[i] || []).forEach(function (a) {
        var ya = onAxis(k, a[2], dec.roof[i], frac);
        if (isFinite(ya)) att += circlePath(px, Y(ya), 4);
      });
    }
    if (vp) plot.appendChild(sv('path', { d: vp, 'class': 'val' }));
    ['P', 'I', 'S', 'F'].forEach(function (v) { if (dots[v]) plot.appendChild(sv('path', { d: dots[v], 'class': 'p-' + v })); });
    if (thr) plot.appendChild(sv('path', { d: thr, 'class': 'thr' }));
    if (att) plot.appendChild(sv('path', { d: att, 'class': 'att' }));
    if (bad) plot.appendChild(sv('path', { d: bad, 'class': 'bad' }));
    if (isFinite(ys[n - 1])) plot.appendChild(sv('path', { d: circlePath(X(dec.x[n - 1]), Y(ys[n - 1]), 6), 'class': 'now' }));
    svg.setAttribute('data-points', String(drawn));

    // Hover: the nearest run's details.
    var xh = sv('line', { y1: T, y2: T + ph, 'class': 'xh', visibility: 'hidden' });
    svg.appendChild(xh);
    var over = sv('rect', { x: L, y: 0, width: pw, height: H, fill: 'transparent' });
    over.addEventListener('mousemove', function (ev) {
      var box = svg.getBoundingClientRect();
      var xv = x0 + (ev.clientX - box.left - L) / pw * (x1 - x0);
      var a = first, b = n - 1;
      while (a < b) { var m = (a + b) >> 1; if (dec.x[m] < xv) a = m + 1; else b = m; }
      if (a > first && xv - dec.x[a - 1] < dec.x[a] - xv) a--;
      xh.setAttribute('x1', X(dec.x[a]));
      xh.setAttribute('x2', X(dec.x[a]));
      xh.setAttribute('visibility', 'visible');
      showTip(ev, pointText(k, a));
    });
    over.addEventListener('mouseleave', function () { xh.setAttribute('visibility', 'hidden'); hideTip(); });
    svg.appendChild(over);

    // Board changes: where a point's board (its GPU's UUID) is not the
    // previous point's. Above the hover area, so that their title shows.
    for (i = Math.max(first, 1); i < n; i++) {
      var bd0 = dec.board[i - 1], bd1 = dec.board[i];
      if (!isFinite(bd0) || !isFinite(bd1) || bd0 === bd1) continue;
      var bx = X(dec.x[i]).toFixed(1);
      var mark = svg.appendChild(sv('g', { 'class': 'board-change' }));
      mark.appendChild(sv('title', null, 'board ' + D.boards[bd1] + ' from run ' + runs[dec.run[i]][0] +
        ' (was ' + D.boards[bd0] + ')'));
      mark.appendChild(sv('line', { x1: bx, x2: bx, y1: T, y2: T + ph, 'class': 'bc' }));
      mark.appendChild(sv('line', { x1: bx, x2: bx, y1: T, y2: T + ph, 'class': 'bc-hit' }));
    }
    return svg;
  }

  function pointText(k, i) {
    var dec = decode(k), run = runs[dec.run[i]], vd = k.ve.charAt(i);
    var lines = ['run ' + run[0] + (run[2] ? '  ' + run[2] : ''),
      'git_sha ' + (run[3] || '(none)'),
      k.m + ': ' + show(k.v[i]) + '   roofline fraction ' + pct(onAxis(k, k.v[i], dec.roof[i], true)),
      'row ' + STATUS_NAME[k.st.charAt(i)] + ', gate ' + VERDICT_NAME[vd]];
    if (isFinite(dec.board[i])) lines.push('board ' + D.boards[dec.board[i]]);
    if (k.b[i] !== null) lines.push('baseline ' + show(k.b[i]) + ' \u00b1 ' + pct(k.e[i]));
    if (isFinite(dec.target[i])) lines.push('target ' + show(dec.target[i]));
    (dec.att[i] || []).forEach(function (a) {
      lines.push((a[1] ? 'attempt ' + a[1] : 'repeated row') + ': ' + show(a[2]) + ' (' + STATUS_NAME[a[3]] + ')');
    });
    if (i === dec.n - 1 && k.why) lines.push(k.why);
    return lines.join('\n');
  }
  function showTip(ev, text) {
    tip.textContent = text;
    tip.hidden = false;
    var x = ev.clientX + 14, y = ev.clientY + 14;
    if (x + tip.offsetWidth > window.innerWidth) x = ev.clientX - tip.offsetWidth - 10;
    if (y + tip.offsetHeight > window.innerHeight) y = ev.clientY - tip.offsetHeight - 10;
    tip.style.left = x + 'px';
    tip.style.top = y + 'px';
  }
  function hideTip() { tip.hidden = true; }

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
})();
