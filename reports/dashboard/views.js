// kgate dashboard: the views (overview, charts, one key, runs, input) and
// the filter. See data.js.
function render() {
  hideTip();
  view.textContent = '';
  document.querySelectorAll('nav a').forEach(function (a) {
    a.classList.toggle('on', a.getAttribute('href') === '#' + state.view);
  });
  if (state.view === 'key') renderKey(state.key);
  else if (state.view === 'charts') renderCharts();
  else if (state.view === 'runs') renderRuns();
  else if (state.view === 'compare') renderCompare(state.a, state.b);
  else if (state.view === 'input') renderInput();
  else renderOverview();
  syncUrl();
  report();
}

// The keys the filter and menus let through, in the chosen order: by group
// (regressions, then keys too new to judge, then probes), by the chosen
// column, then worst first.
function selected(k) {
  return matches(k.text) && (!problemsBox.checked || k.rank < 2) && (!menus.gpu.value || D.gpus[k.g][0] === menus.gpu.value) &&
    (!menus.dtype.value || k.d === menus.dtype.value) && (!menus.exp.value || k.n === menus.exp.value);
}
function ranked() {
  var col = COLS[state.sort] || COLS.verdict, list = [];
  keys.forEach(function (k, i) { if (selected(k)) list.push(i); });
  function num(x, y) { return (isNaN(x) - isNaN(y)) || (x < y ? -1 : x > y ? 1 : 0); }
  return list.sort(function (a, b) {
    var ka = keys[a], kb = keys[b], x = col[1](ka), y = col[1](kb);
    var c = typeof x === 'string' ? x.localeCompare(y) : num(x, y);
    return ka.grp - kb.grp || (state.desc && !isNaN(x) && !isNaN(y) ? -c : c) || ka.rank - kb.rank || num(-ka.bad, -kb.bad) || a - b;
  });
}
function sinceRun(k) { return k.since < 0 ? null : runs[decode(k).run[k.since]]; }
function newestText(k) {
  var f = newestFraction(k), n = k.v.length;
  return isFinite(f) ? pct(f) : n && k.v[n - 1] !== null ? show(k.v[n - 1]) : STATUS_NAME[k.st.charAt(n - 1)] || '-';
}
// The overview's columns: heading, sort value, cell.
var COLS = {
  verdict: ['verdict', function (k) { return k.rank; }, function (k, i) {
    var td = el('td', { 'class': 'cell ' + VERDICT_CLASS[k.vd] });
    td.appendChild(el('a', { href: '#key/' + i, title: k.why || '' }, VERDICT_NAME[k.vd]));
    return td;
  }],
  change: ['change', function (k) { return -k.bad; }, function (k) {
    return el('td', { 'class': 'n', title: 'newest run against its baseline (median of the window)' },
      isFinite(k.chg) ? (k.chg > 0 ? '+' : '') + (k.chg * 100).toFixed(1) + '%' : '-');
  }],
  n: ['experiment', function (k) { return k.n; }], s: ['shape', function (k) { return k.s; }],
  d: ['dtype', function (k) { return k.d; }],
  since: ['failing since', function (k) { return k.since < 0 ? NaN : decode(k).run[k.since]; }, function (k) {
    var r = sinceRun(k), td = el('td', { 'class': 'since' });
    if (r) {
      td.textContent = 'since ' + r[0] + ' ';
      td.appendChild(el('span', { 'class': 'sub' }, [iso(r[1]), (r[3] || '').slice(0, 7), (k.v.length - k.since > 1 ? k.v.length - k.since + ' runs' : 'newest run only')].filter(String).join(' \u00b7 ')));
    }
    return td;
  }],
  m: ['metric', function (k) { return k.m; }],
  g: ['GPU', function (k) { return gpuLabel(k.g) + (k.boards.length > 1 ? ' \u00d7' + k.boards.length : ''); }],
  value: ['newest', function (k) { return newestFraction(k); }, function (k) {
    return el('td', { 'class': 'n', title: 'fraction of the roofline (the value where there is none)' }, newestText(k));
  }]
};
var GROUPS = ['', 'Too little history for the history rule (judged against their targets only)', 'Probes (they measure the machine, not a kernel)'];
var CAP = 200;  // rows drawn at first: the first screen stays fast on any history

function renderOverview() {
  var list = ranked(), shown = state.all ? list : list.slice(0, CAP), grp = -1, body;
  view.appendChild(el('div', { 'class': 'count', id: 'count' }, list.length + ' of ' + keys.length + ' keys match' +
    (shown.length < list.length ? '; the first ' + shown.length + ' are shown' : '') + '. Worst first; click a heading to sort.'));
  shown.forEach(function (i) {
    var k = keys[i];
    if (k.grp !== grp) {
      grp = k.grp;
      if (grp) view.appendChild(el('h2', null, GROUPS[grp]));
      var wrap = view.appendChild(el('div', { 'class': 'scroll' }));
      body = table({ 'class': 'overview' }, Object.keys(COLS).map(function (c) {
        return [{ 'data-sort': c, 'class': c === state.sort ? 'on' : undefined }, COLS[c][0] + (c === state.sort ? (state.desc ? ' \u25b4' : ' \u25be') : '')];
      }), wrap);
    }
    var tr = body.appendChild(el('tr', { 'data-key': i, title: [k['var'] ? 'variant ' + k['var'] : ''].concat(k.boards.map(boardLabel)).join(' ') }));
    for (var c in COLS) tr.appendChild(COLS[c][2] ? COLS[c][2](k, i) : el('td', null, COLS[c][1](k)));
  });
  state.rows = list.length;
  if (shown.length < list.length) more('show all ' + list.length, function () { state.all = true; });
}
function more(text, then) {
  var b = view.appendChild(el('button', { 'class': 'more' }, text));
  b.addEventListener('click', function () { then(); render(); });
}
view.addEventListener('click', function (e) {
  var c = e.target.closest && e.target.closest('th[data-sort]');
  if (!c) return;
  var s = c.getAttribute('data-sort');
  state.desc = s === state.sort && !state.desc;
  state.sort = s;
  render();
});

function renderCharts() {
  var list = ranked();
  state.rows = list.length;
  view.appendChild(el('div', { 'class': 'count', id: 'count' },
    list.length + ' of ' + keys.length + ' keys match, worst first' + (list.length > state.shown ? '; the first ' + state.shown + ' are drawn' : '')));
  view.appendChild(legend());
  var grid = el('div', { 'class': 'grid' });
  list.slice(0, state.shown).forEach(function (i) { grid.appendChild(card(i, 440, 170, xRange(i))); });
  view.appendChild(grid);
  if (list.length > state.shown) more('draw ' + Math.min(PAGE, list.length - state.shown) + ' more', function () { state.shown += PAGE; });
}

// The x range of key i on every GPU model (undefined where it has no other).
function xRange(i) {
  var xr = [Infinity, -Infinity];
  sameKey[keys[i].id].forEach(function (j) {
    var x = decode(keys[j]).x;
    xr = [Math.min(xr[0], x[0]), Math.max(xr[1], x[x.length - 1])];
  });
  return sameKey[keys[i].id].length > 1 && xr[1] > xr[0] ? xr : undefined;
}
function card(i, w, h, xr) {
  var k = keys[i], c = el('div', { 'class': 'card' });
  c.appendChild(el('h3')).appendChild(el('a', { href: '#key/' + i }, keyLabel(k)));
  c.appendChild(badged(el('div', { 'class': 'sub' }), k, gpuLabel(k.g) + (k.why ? ' \u2014 ' + k.why : '')));
  c.appendChild(chart(k, w, h, xr));
  return c;
}
// `e` holding k's verdict as a badge, then `text`.
function badged(e, k, text) {
  e.appendChild(el('span', { 'class': 'badge ' + VERDICT_CLASS[k.vd] }, VERDICT_NAME[k.vd]));
  e.appendChild(document.createTextNode(' ' + text));
  return e;
}

function legend() {
  var d = el('div', { 'class': 'legend' });
  // [colour, text, hollow]
  [['#2e7d32', 'pass'], ['#d98200', 'inconclusive'], ['#c62828', 'FAIL'], ['#d98200', 'throttled', true],
    ['#6a1b9a', 'attempt (re-measured)', true]].forEach(function (m) {
    var i = d.appendChild(el('i'));
    i.style.background = m[2] ? '#fff' : m[0];
    if (m[2]) i.style.border = '1.5px solid ' + m[0];
    d.appendChild(document.createTextNode(m[1]));
  });
  d.appendChild(document.createTextNode(
    ' \u00b7 dashed: baseline (median of the last ' + D.window + ' runs), shaded: the band a single run may ' +
    'move before rule 3 fails it (the larger of ' + pct(D.minGap) + ' and what the noise explains), ' +
    'dotted: target, ticks on top: a new git_sha (named where there is room), whiskers: the run\'s rows\' min-max time (else \u00b1 their samples\' noise_rel), ' +
    '\u00d7: failed or incorrect row' + (D.boards.length ? ', coloured lines: one per board (GPU UUID), thin dashed vertical line: ' +
    'the key\'s runs moved to another board, judged by the gate\'s board rule.' : '.')));
  return d;
}

function renderKey(i) {
  var k = keys[i];
  state.rows = 0;
  if (!k) { view.appendChild(el('p', null, 'No such key.')); return; }
  var dec = decode(k);
  view.appendChild(el('h2', null, keyLabel(k) + ' @ ' + gpuLabel(k.g)));
  view.appendChild(badged(el('p', { 'class': 'why' }), k, (k.why || (k.vd ? '' : 'not in the newest run of this GPU (nor in the one before)')) +
    (k['var'] ? ' \u00b7 variant ' + k['var'] : '')));
  var missing = [];
  if (!k.tg.some(function (s) { return s[1] !== null; })) missing.push('no target');
  if (!k.rf.some(function (s) { return s[1] !== null; })) missing.push('no roofline (the fraction axis is empty)');
  if (dec.n < 2) missing.push('one run only: no trend yet');
  if (missing.length) view.appendChild(el('p', { 'class': 'count' }, 'Missing: ' + missing.join('; ') + '.'));
  view.appendChild(legend());
  // The same key on the other GPU models, all on one x range.
  var sib = sameKey[k.id].filter(function (j) { return j !== i; }), xr = xRange(i);
  view.appendChild(chart(k, Math.max(600, Math.min(1200, view.clientWidth - 40)), 320, xr));
  if (sib.length) {
    view.appendChild(el('h2', null, 'The same on other GPUs'));
    var grid = el('div', { 'class': 'grid' });
    sib.forEach(function (j) { grid.appendChild(card(j, 440, 170, xr)); });
    view.appendChild(grid);
  }
  view.appendChild(el('h2', null, 'Newest runs'));
  var body = table({ id: 'points' }, ['run', 'time', 'git_sha', 'value', 'roofline fraction', 'baseline', 'target',
    'row status', 'verdict', 'attempts'], view.appendChild(el('div', { 'class': 'scroll' })));
  var N = { 'class': 'n' };
  for (var j = dec.n - 1; j >= 0 && j >= dec.n - 30; j--) {
    var run = runs[dec.run[j]], vd = k.ve.charAt(j);
    body.appendChild(cells(el('tr'), 'td', [run[0], run[2], [{ 'class': 'sha' }, run[3] || '-'], [N, show(k.v[j])],
      [N, pct(onAxis(k, k.v[j], dec.roof[j], true))], [N, show(k.b[j])], [N, show(dec.target[j])],
      STATUS_NAME[k.st.charAt(j)], [{ 'class': VERDICT_CLASS[vd] }, VERDICT_NAME[vd]],
      (dec.att[j] || []).map(function (a) {
        return (a.length > 4 ? boardLabel(a[4]) : a[1] ? '#' + a[1] : 'repeat') + ' ' + show(a[2]) + ' (' + STATUS_NAME[a[3]] + ')';
      }).join(', ')]));
  }
}

function renderRuns() {
  var toks = tokens(), shown = 0;
  view.appendChild(el('div', { 'class': 'count', id: 'count' }));
  var body = table({ id: 'runs' }, ['time', 'run: its keys against the run before', 'GPU', 'boards', 'host', 'driver', 'CUDA', 'git_sha', 'rows', 'gate verdict'],
    view.appendChild(el('div', { 'class': 'scroll' })));
  for (var r = runs.length - 1; r >= 0; r--) {
    var run = runs[r], gpus = run[6].map(gpuLabel).join(', '), v = run[8], bds = run[10].filter(function (b) { return D.boards[b][0]; });
    var hosts = bds.map(function (b) { return D.boards[b][2]; }).filter(function (h, j, a) { return h && a.indexOf(h) === j; }).join(', ');
    if (!matches([run[0], run[2], gpus, run[3], run[4], run[5], hosts].concat(bds.map(boardLabel)).join(' ').toLowerCase(), toks) || (problemsBox.checked && !v[0] && !v[1])) continue;
    var rowText = [];
    'obtifs'.split('').forEach(function (s, j) { if (run[7][j]) rowText.push(run[7][j] + ' ' + STATUS_NAME[s]); });
    var cls = v[0] ? 'fail' : v[1] ? 'inc' : v[2] ? 'pass' : 'skip';
    var vt = (v[0] ? 'FAIL ' + v[0] + ' \u00b7 ' : '') + (v[1] ? v[1] + ' inconclusive \u00b7 ' : '') + v[2] + ' pass' +
      (v[3] ? ' \u00b7 ' + v[3] + ' skipped' : '') + (run[9] ? ' (kgate check)' : '');
    var tr = body.appendChild(cells(el('tr', { 'data-row': r }), 'td', [run[2] || '-', '', gpus, bds.map(boardLabel).join(', ') || '-', hosts || '-',
      run[4] || '-', run[5] || '-', [{ 'class': 'sha' }, run[3] || '-'], rowText.join(', '), [{ 'class': cls }, vt]]));
    tr.cells[1].appendChild(el('a', { href: '#compare/' + runBefore(r) + '/' + r }, run[0]));
    shown++;
  }
  document.getElementById('count').textContent = shown + ' of ' + runs.length + ' runs shown';
  state.rows = shown;
}

// The newest earlier run on one of run r's GPU models, -1 if none.
function runBefore(r) {
  for (var p = r - 1; p >= 0; p--) if (runs[p][6].some(function (g) { return runs[r][6].indexOf(g) >= 0; })) return p;
  return -1;
}
// kgate compare's table for two runs of this history: each key's value in
// both, the change and the noise of one run on each side (1.2533 noise_rel /
// sqrt(samples); 2% where a row has none), SLOWER or FASTER beyond the larger
// of 2% and three times that noise, SAME within 2% when the noise allows.
function renderCompare(a, b) {
  var pick = view.appendChild(el('p', { 'class': 'count', id: 'count' }));
  [a, b].forEach(function (r, j) {
    pick.appendChild(document.createTextNode(j ? ' against NEW run ' : 'Keys of the BASE run '));
    var s = pick.appendChild(el('select', { 'class': 'pick' }));
    s.appendChild(el('option', { value: -1 }, '(none)'));
    for (var q = runs.length - 1; q >= 0; q--) s.appendChild(el('option', { value: q }, runs[q][0] + ' ' + iso(runs[q][1], true)));
    s.value = r;
  });
  pick.addEventListener('change', function () {
    var s = pick.querySelectorAll('select');
    location.hash = '#compare/' + s[0].value + '/' + s[1].value;
  });
  var summary = view.appendChild(el('p', { id: 'compare-summary' }));
  var body = table({ id: 'compare' }, ['verdict', 'key', 'GPU', 'base', 'new', 'change', 'noise', 'gate (new run)'], view.appendChild(el('div', { 'class': 'scroll' })));
  function noise(k, i) {
    var s = k.nr && k.nr[i], n = decode(k).samples[i];
    return s && n > 0 ? 1.2533 * s / 100 / Math.sqrt(n) : 0.02;
  }
  var list = [], count = {}, logSum = 0, N = { 'class': 'n' };
  ranked().forEach(function (i) {
    var k = keys[i], pa = pointAt(k, a), pb = pointAt(k, b), va = pa < 0 ? null : k.v[pa], vb = pb < 0 ? null : k.v[pb];
    if (pb < 0 && pa < 0) return;
    var row = { i: i, k: k, va: va, vb: vb, vd: '-', ratio: NaN, u: NaN, gate: pb < 0 ? '' : k.ve.charAt(pb) };
    if (va > 0 && vb > 0) {
      row.ratio = k.lo ? va / vb : vb / va;
      row.u = Math.sqrt(Math.pow(noise(k, pa), 2) + Math.pow(noise(k, pb), 2));
      var better = row.ratio - 1, needed = Math.max(0.02, 3 * row.u);
      row.vd = better > needed ? 'FASTER' : better < -needed ? 'SLOWER' : Math.abs(better) <= 0.02 && 3 * row.u <= 0.02 ? 'SAME' : 'UNSURE';
      logSum += Math.log(row.ratio);
    }
    count[row.vd] = (count[row.vd] || 0) + 1;
    list.push(row);
  });
  list.sort(function (x, y) { return (isNaN(x.ratio) - isNaN(y.ratio)) || x.ratio - y.ratio; });  // worst first
  list.forEach(function (w) {
    var tr = body.appendChild(el('tr', { 'class': { SLOWER: 'fail', FASTER: 'pass', UNSURE: 'inc' }[w.vd] }));
    cells(tr, 'td', [w.vd, '', gpuLabel(w.k.g), [N, show(w.va)], [N, show(w.vb)],
      [N, isFinite(w.ratio) ? (w.vb / w.va > 1 ? '+' : '') + pct(w.vb / w.va - 1) : '-'], [N, isFinite(w.u) ? '\u00b1' + pct(w.u) : '-'],
      [{ 'class': VERDICT_CLASS[w.gate] }, w.gate ? VERDICT_NAME[w.gate] : '-']]);
    tr.cells[1].appendChild(el('a', { href: '#key/' + w.i }, keyLabel(w.k)));
  });
  var compared = list.length - (count['-'] || 0);
  summary.textContent = compared ? 'geomean NEW/BASE ' + Math.exp(logSum / compared).toFixed(4) + ' over ' + compared + ' keys: ' +
    ['FASTER', 'SLOWER', 'SAME', 'UNSURE'].map(function (v) { return (count[v] || 0) + ' ' + v; }).join(', ') +
    (count['-'] ? '; ' + count['-'] + ' in one run only' : '') : list.length + ' keys; nothing to compare (no key has a value in both runs)';
  state.rows = list.length;
}

function renderInput() {
  state.rows = 0;
  function list(title, items) {
    view.appendChild(el('h2', null, title));
    var ul = view.appendChild(el('ul'));
    items.forEach(function (x) { ul.appendChild(el('li', null, x)); });
  }
  list('Files read', D.inputs);
  view.appendChild(el('p', null, D.rows + ' rows, ' + runs.length + ' runs, ' + keys.length + ' keys, ' +
    D.gpus.length + ' GPUs; generated ' + D.generated + '.'));
  list(D.warnings.length + ' input warning(s)', D.warnings);
}
