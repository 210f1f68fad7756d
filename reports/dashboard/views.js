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
  else if (state.view === 'input') renderInput();
  else renderOverview();
  report();
}

function renderOverview() {
  view.appendChild(el('div', { 'class': 'count', id: 'count' }));
  view.appendChild(el('div', { 'class': 'legend' },
    'Each cell: the newest run\'s fraction of its roofline (the value where there is no roofline), ' +
    'coloured by the gate\'s verdict; click it for the trend.'));
  var body = table({ 'class': 'overview', id: 'overview' }, ['experiment', 'shape', 'dtype', 'metric']
    .concat(usedGpus.map(function (g) { return [{ 'class': 'n' }, gpuLabel(g)]; })));
  rowOrder.forEach(function (row, ri) {
    var tr = cells(el('tr', { 'data-row': ri }), 'td', [row.n, row.s, row.d, row.m]);
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
    (k['var'] ? ' \u00b7 variant ' + k['var'] : '')));
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
  var body = table({ id: 'points' }, ['run', 'time', 'git_sha', 'value', 'roofline fraction', 'baseline', 'target',
    'row status', 'verdict', 'attempts']);
  var N = { 'class': 'n' };
  for (var j = dec.n - 1; j >= 0 && j >= dec.n - 30; j--) {
    var run = runs[dec.run[j]], vd = k.ve.charAt(j);
    body.appendChild(cells(el('tr'), 'td', [run[0], run[2], [{ 'class': 'sha' }, run[3] || '-'], [N, show(k.v[j])],
      [N, pct(onAxis(k, k.v[j], dec.roof[j], true))], [N, show(k.b[j])], [N, show(dec.target[j])],
      STATUS_NAME[k.st.charAt(j)], [{ 'class': VERDICT_CLASS[vd] }, VERDICT_NAME[vd]],
      (dec.att[j] || []).map(function (a) {
        return (a[1] ? '#' + a[1] : 'repeat') + ' ' + show(a[2]) + ' (' + STATUS_NAME[a[3]] + ')';
      }).join(', ')]));
  }
}

function renderRuns() {
  view.appendChild(el('div', { 'class': 'count', id: 'count' }));
  var body = table({ id: 'runs' }, ['time', 'run', 'GPU', 'driver', 'CUDA', 'git_sha', 'rows', 'gate verdict']);
  for (var r = runs.length - 1; r >= 0; r--) {
    var run = runs[r], tr = el('tr', { 'data-row': r });
    var gpus = run[6].map(gpuLabel).join(', ');
    var rowText = [];
    'obtifs'.split('').forEach(function (s, j) { if (run[7][j]) rowText.push(run[7][j] + ' ' + STATUS_NAME[s]); });
    var v = run[8], cls = v[0] ? 'fail' : v[1] ? 'inc' : v[2] ? 'pass' : 'skip';
    var vt = (v[0] ? 'FAIL ' + v[0] + ' \u00b7 ' : '') + (v[1] ? v[1] + ' inconclusive \u00b7 ' : '') + v[2] + ' pass' +
      (v[3] ? ' \u00b7 ' + v[3] + ' skipped' : '') + (run[9] ? ' (kgate check)' : '');
    cells(tr, 'td', [run[2] || '-', run[0], gpus, run[4] || '-', run[5] || '-', [{ 'class': 'sha' }, run[3] || '-'],
      rowText.join(', '), [{ 'class': cls }, vt]]);
    tr.kbText = [run[0], run[2], gpus, run[3], run[4], run[5]].join(' ').toLowerCase();
    tr.kbProblem = v[0] > 0 || v[1] > 0;
    body.appendChild(tr);
  }
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
