// kgate dashboard: the trend chart of one key and its tooltips. See data.js.
function niceStep(span, n) {
  var raw = span / n, p = Math.pow(10, Math.floor(Math.log10(raw))), m = raw / p;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 2.5 ? 2.5 : m <= 5 ? 5 : 10) * p;
}
function timeStep(span) {
  var H = 3600, Dy = 86400, c = [60, 300, 900, 1800, H, 3 * H, 6 * H, 12 * H, Dy, 2 * Dy, 7 * Dy, 14 * Dy, 30 * Dy, 61 * Dy, 91 * Dy, 182 * Dy, 365 * Dy];
  for (var i = 0; i < c.length; i++) if (span / c[i] <= 7) return c[i];
  return c[c.length - 1] * Math.ceil(span / (7 * c[c.length - 1]));
}
function circlePath(cx, cy, r) {
  return 'M' + (cx - r).toFixed(1) + ' ' + cy.toFixed(1) + 'a' + r + ' ' + r + ' 0 1 0 ' + 2 * r + ' 0a' + r + ' ' + r + ' 0 1 0 ' + -2 * r + ' 0';
}

// A path of class c under `parent` for each [d, c] whose d is not empty.
function paths(parent, list) {
  list.forEach(function (p) { if (p[0]) parent.appendChild(sv('path', { d: p[0], 'class': p[1] })); });
}
var PALETTE = ['#1565c0', '#ef6c00', '#00897b', '#ad1457', '#5d4037', '#3949ab', '#7cb342', '#8e24aa'];
// A run's error bar on the axis: its rows' min-max time in the metric
// (mn, mx), else each row (re-measurements and GPUs) +- its samples' noise_rel.
function spread(k, i, frac) {
  var dec = decode(k), v = k.v[i], s = k.nr && k.nr[i] !== null ? k.nr[i] / 100 : 0, w = [];
  if (k.mn && k.mn[i] !== null) w = [v, v * (1 - k.mn[i] / 100), v * (1 + k.mx[i] / 100)];
  else [v].concat((dec.att[i] || []).map(function (a) { return a[2]; })).forEach(function (x) { if (x !== null) w.push(x * (1 - s), x * (1 + s)); });
  var y = w.map(function (x) { return onAxis(k, x, dec.roof[i], frac); }).filter(isFinite);
  var lo = Math.min.apply(null, y), hi = Math.max.apply(null, y);
  return hi > lo ? [lo, hi] : null;
}

// One key's trend; `xr` ([x0, x1]) puts charts of several GPUs on one x range.
function chart(k, W, H, xr) {
  var dec = decode(k), frac = yModeBox.value === 'fraction', n = dec.n, nb = k.boards.length > 1 ? k.boards.length : 0;
  var Hs = H + 12 * Math.ceil(nb / 4);  // a row of board names per four boards
  var svg = sv('svg', { 'class': 'kb-chart', width: W, height: Hs, viewBox: '0 0 ' + W + ' ' + Hs, role: 'img' });
  var L = 58, R = 10, T = 28, B = 22, pw = W - L - R, ph = H - T - B;
  // The points in the chosen range.
  var first = 0, x1 = xr ? xr[1] : dec.x[n - 1], days = +rangeBox.value;
  var lim = days > 0 ? x1 - days * (D.timeAxis ? 86400 : 1) : -Infinity;
  while (first < n - 1 && dec.x[first] < lim) first++;
  var ys = [], err = [], lo = Infinity, hi = -Infinity;
  for (var i = first; i < n; i++) {
    var y = onAxis(k, k.v[i], dec.roof[i], frac);
    ys[i] = y;
    err[i] = spread(k, i, frac);
    if (isFinite(y)) { lo = Math.min(lo, y); hi = Math.max(hi, y); }
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
  // (Not the band: on a short history it is wide and would flatten the data;
  // nor an error bar's far end: a sample's max is often several times its median.)
  for (i = first; i < n; i++) {
    [base[i], tgt[i]].concat(err[i] || []).forEach(function (v) {
      if (v !== undefined && isFinite(v) && v > lo - 1.5 * span && v < hi + 1.5 * span) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    });
  }
  // At least 2% of the value high: a 0.2% wiggle does not fill the chart.
  var mid = (lo + hi) / 2, half = Math.max((hi - lo) / 2, 0.01 * Math.abs(mid)) * 1.06 || 1;
  lo = mid - half; hi = mid + half;
  var x0 = xr ? Math.max(xr[0], lim) : dec.x[first];
  if (x1 - x0 <= 0) { var w0 = D.timeAxis ? 43200 : 1; x0 -= w0; x1 += w0; }
  function X(x) { return L + pw * (x - x0) / (x1 - x0); }
  function Y(y) { return T + ph * (1 - (y - lo) / (hi - lo)); }

  // Axes.
  var g = sv('g');
  var ys_ = niceStep(hi - lo, 4);
  for (var yt = Math.ceil(lo / ys_) * ys_; yt <= hi; yt += ys_) {
    g.appendChild(sv('line', { x1: L, x2: W - R, y1: Y(yt), y2: Y(yt), 'class': 'gl' }));
    g.appendChild(sv('text', { x: L - 4, y: Y(yt) + 3, 'text-anchor': 'end', 'class': 'ax' }, frac ? (yt * 100).toFixed(Math.max(0, Math.ceil(-Math.log10(ys_ * 100) - 1e-9))) + '%' : show(yt)));
  }
  var xs_ = D.timeAxis ? timeStep(x1 - x0) : Math.max(1, niceStep(x1 - x0, 6));
  for (var xt = Math.ceil(x0 / xs_) * xs_; xt <= x1; xt += xs_) {
    if (!D.timeAxis && (xt < 0 || xt >= runs.length)) continue;  // no such run
    var lab = D.timeAxis ? (x1 - x0 < 2 * 86400 ? iso(xt, true).slice(5) : iso(xt).slice(x1 - x0 > 300 * 86400 ? 0 : 5)) : 'run ' + (xt + 1);
    g.appendChild(sv('text', { x: X(xt), y: H - 6, 'text-anchor': 'middle', 'class': 'ax' }, lab));
  }
  g.appendChild(sv('text', { x: 4, y: 9, 'class': 'ax' }, frac ? 'fraction of roofline' : k.m));
  // A target too far from the data to fit: named at the edge it lies beyond.
  var tLast = NaN;
  for (i = n - 1; i >= first && !isFinite(tLast); i--) tLast = tgt[i];
  if (tLast > hi || tLast < lo) {
    g.appendChild(sv('text', { x: W - R - 2, y: tLast > hi ? T + 8 : T + ph - 4, 'text-anchor': 'end', 'class': 'tgt-off' },
      (tLast > hi ? '\u25b2' : '\u25bc') + ' target ' + (frac ? pct(tLast) : show(tLast)) + ' (off scale)'));
  }
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
  paths(plot, [[bandPath, 'band'], [basePath, 'base']]);
  var tp = '', pen = false;
  for (i = first; i < n; i++) {
    if (isFinite(tgt[i])) { tp += (pen ? 'L' : 'M') + X(dec.x[i]).toFixed(1) + ' ' + Y(tgt[i]).toFixed(1); pen = true; } else pen = false;
  }
  paths(plot, [[tp, 'tgt']]);

  // Commit changes: a tick on top, named where there is room; a tick per run below.
  var shaPath = '', named = -Infinity, runTicks = '';
  for (i = Math.max(first, 1); i < n; i++) {
    var s0 = runs[dec.run[i - 1]][3], s1 = runs[dec.run[i]][3], xx = X(dec.x[i]);
    if (s0 && s1 && s0 !== s1) {
      shaPath += 'M' + xx.toFixed(1) + ' ' + T + 'v-6';
      if (xx - named > 50) {
        g.appendChild(sv('text', { x: xx, y: T - 8, 'text-anchor': 'middle', 'class': 'ax' }, s1.slice(0, 7)));
        named = xx;
      }
    }
  }
  for (i = first; i < n && (n - first) * 4 < pw; i++) runTicks += 'M' + X(dec.x[i]).toFixed(1) + ' ' + (T + ph) + 'v4';
  paths(g, [[runTicks, 'rt']]);
  paths(plot, [[shaPath, 'sha']]);

  // The values: a line through them, a dot per run coloured by verdict.
  var vp = '', dots = { P: '', I: '', F: '', S: '' }, thr = '', bad = '', att = '', ep = '';
  pen = false;
  for (i = first; i < n; i++) {
    var st = k.st.charAt(i), vd = k.ve.charAt(i), px = X(dec.x[i]);
    if (isFinite(ys[i])) {
      var py = Y(ys[i]);
      vp += (pen ? 'L' : 'M') + px.toFixed(1) + ' ' + py.toFixed(1);
      pen = true;
      if (err[i]) ep += 'M' + px.toFixed(1) + ' ' + Y(err[i][0]).toFixed(1) + 'V' + Y(err[i][1]).toFixed(1) + 'm-2 0h4m0 ' + (Y(err[i][0]) - Y(err[i][1])).toFixed(1) + 'h-4';
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
      if (isFinite(ya) && a.length < 5) att += circlePath(px, Y(ya), 4);
    });
  }
  paths(plot, [[ep, 'err'], [vp, 'val']]);
  // Each board (GPU by UUID) of a key on several: its own line, overlaid.
  var per = {};
  function onBoard(b, i, v) {
    var y = onAxis(k, v, dec.roof[i], frac);
    if (nb && i >= first && isFinite(y)) (per[b] = per[b] || []).push([X(dec.x[i]), Y(y)]);
  }
  for (i = first; i < n; i++) if (isFinite(dec.board[i])) onBoard(dec.board[i], i, k.v[i]);
  k.at.forEach(function (a) { if (a.length > 4) onBoard(a[4], a[0], a[2]); });
  (nb ? k.boards : []).forEach(function (b, j) {
    var pts = (per[b] || []).sort(function (p, q) { return p[0] - q[0]; }), c = PALETTE[j % PALETTE.length];
    plot.appendChild(sv('path', { d: pts.map(function (p, m) { return (m ? 'L' : 'M') + p[0].toFixed(1) + ' ' + p[1].toFixed(1) + circlePath(p[0], p[1], 1.8) + 'M' + p[0].toFixed(1) + ' ' + p[1].toFixed(1); }).join(''),
      'class': 'bs', stroke: c, 'data-board': D.boards[b][0] }));
    g.appendChild(sv('text', { x: L + (j % 4) * pw / 4, y: H + 8 + 12 * Math.floor(j / 4), fill: c }, '\u25cf ' + boardLabel(b)));
  });
  paths(plot, [[dots.P, 'p-P'], [dots.I, 'p-I'], [dots.S, 'p-S'], [dots.F, 'p-F'], [thr, 'thr'], [att, 'att'], [bad, 'bad'],
    [isFinite(ys[n - 1]) && circlePath(X(dec.x[n - 1]), Y(ys[n - 1]), 6), 'now']]);
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
    mark.appendChild(sv('title', null, 'board ' + boardLabel(bd1) + ' from run ' + runs[dec.run[i]][0] +
      ' (was ' + boardLabel(bd0) + ')'));
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
  if (isFinite(dec.board[i])) lines.push('board ' + boardLabel(dec.board[i]));
  if (k.b[i] !== null) lines.push('baseline ' + show(k.b[i]) + ' \u00b1 ' + pct(k.e[i]));
  if (isFinite(dec.target[i])) lines.push('target ' + show(dec.target[i]));
  var mm = k.mn && k.mn[i] !== null;
  if (k.nr && k.nr[i] !== null) lines.push('noise_rel ' + k.nr[i] + '% of ' + dec.samples[i] + ' samples' + (mm ? '' : ' (the error bar)'));
  if (mm) lines.push('min-max time of its rows: ' + show(k.v[i] * (1 - k.mn[i] / 100)) + ' to ' + show(k.v[i] * (1 + k.mx[i] / 100)) + ' (the error bar)');
  (dec.att[i] || []).forEach(function (a) {
    lines.push((a.length > 4 ? boardLabel(a[4]) : a[1] ? 'attempt ' + a[1] : 'repeated row') + ': ' + show(a[2]) + ' (' + STATUS_NAME[a[3]] + ')');
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
