#!/usr/bin/env python3
"""The dashboard in a real browser (headless Chromium, through the DevTools
protocol): `kgate dashboard` pages made from a synthetic history shaped like
the real H100/H200 runs (tests/browser/data/) and from bad input; each must
load without a script error or console error, draw the expected charts, and
its filter box must narrow the table. Screenshots go to --out.

Exit 0 pass, 1 fail, 77 skipped (no Chromium: ctest's SKIP_RETURN_CODE)."""

import argparse
import csv
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import Browser, find_chromium  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
READY = "document.getElementById('kb-status').getAttribute('data-state') === 'ready'"
STATUS = "Object.assign({}, document.getElementById('kb-status').dataset)"
BOARD_MARKS = "document.querySelectorAll('#view svg.kb-chart g.board-change').length"
# Two H100 boards, one build: the recorded history's rows of the MLP point
# the board-change marks are checked on.
TWO_BOARDS = os.path.join(HERE, "..", "data", "h100-two-boards-2026-11-25.csv")

failures = []


def check(ok, what):
    print(("  ok    " if ok else "  FAIL  ") + what)
    if not ok:
        failures.append(what)


def kgate(exe, *args):
    r = subprocess.run([exe] + list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if r.returncode != 0:
        print(r.stdout)
        raise SystemExit("kgate %s failed with exit code %d" % (args[0], r.returncode))
    return r.stdout


def goto(b, hash_):
    b.eval("location.hash = %s" % json.dumps(hash_))
    deadline = time.time() + 10
    while b.eval(STATUS)["view"] != hash_.split("/")[0].lstrip("#"):
        if time.time() > deadline:
            raise TimeoutError("view " + hash_ + " not drawn")
        time.sleep(0.02)
    return b.eval(STATUS)


def visible_rows_text(b):
    return b.eval("Array.from(document.querySelectorAll('#view tbody tr'))"
                  ".filter(r => !r.hidden).map(r => r.textContent.toLowerCase())")


def bad_input(d):
    """A kbench file with one run, no target, no git_sha, and names that are
    markup; and a gpt_fast file of the oldest form (no arch, no run ids)."""
    header = ("name,metric,target,actual,dtype,device,arch,is_model,shape,variant,status,"
              "samples,median_us,min_us,max_us,noise_rel,roofline,roofline_fraction,"
              "sm_clock_mhz,mem_clock_mhz,driver,cuda,suite_version,git_sha,run_id,timestamp,"
              "message\n")
    rows = [
        '"<img src=x onerror=""window.kbPwned=1"">",memory_bandwidth(GB/s),,1200,bfloat16,cuda,'
        'NVIDIA H100 80GB HBM3,False,"D=<b>1</b>",v,ok,10,,,,0.01,3000,0.4,,,,,,,r1,'
        '2026-11-24T01:00:00Z,\n',
        'gemv,memory_bandwidth(GB/s),,2500,int8,cuda,"<script>window.kbPwned=2</script>",False,'
        'D=1024,v,ok,10,,,,0.01,3000,0.83,,,,,,,r1,2026-11-24T01:00:00Z,\n',
        'gemv,memory_bandwidth(GB/s),,,bfloat16,cuda,NVIDIA H100 80GB HBM3,False,D=1024,v,failed,'
        '0,,,,,,,,,,,,,r1,2026-11-24T01:00:00Z,"kernel <i>crashed</i>"\n',
    ]
    kb = os.path.join(d, "bad-kbench.csv")
    with open(kb, "w") as f:
        f.write(header + "".join(rows))
    gf = os.path.join(d, "bad-gpt-fast.csv")
    with open(gf, "w") as f:
        f.write("name,metric,target,actual,dtype,device\n"
                "layer_norm,memory_bandwidth(GB/s),950,1010,bfloat16,cuda\n"
                "layer_norm,memory_bandwidth(GB/s),950,1003,bfloat16,cuda\n"
                "gemv,memory_bandwidth(GB/s),0,870,int8,cuda\n")
    return kb, gf


def page_data(path):
    return json.loads(open(path).read().split('id="kb-data">', 1)[1].split("</script>", 1)[0])


def first_board(d):
    """The two-board history's runs on its first board only."""
    out = os.path.join(d, "one-board.csv")
    with open(TWO_BOARDS, newline="") as f, open(out, "w", newline="") as g:
        rows = csv.reader(f)
        w = csv.writer(g)
        header = next(rows)
        w.writerow(header)
        uuid = header.index("gpu_uuid")
        for r in rows:
            if r[uuid].startswith("GPU-ee41fd8f"):
                w.writerow(r)
    return out


def drive_overview(b, nkeys):
    """Filter, menus, sort and the URL that keeps them."""
    for tok in b.eval("document.getElementById('filter').placeholder").split(": ", 1)[1].split():
        if tok == "cuda:1":
            continue  # (a one-GPU history: checked on the four-GPU page)
        set_filter(b, tok)
        texts = b.eval("Array.from(document.querySelectorAll('#view tbody tr'))"
                       ".map(r => (r.textContent + r.title).toLowerCase())")
        bad = [x for x in texts if tok not in x and not (tok == "bf16" and "bfloat16" in x)]
        check(texts and not bad, "the placeholder's '%s' matches %d rows %s" % (tok, len(texts), bad[:1]))
    set_filter(b, "gather int8")
    texts = visible_rows_text(b)
    check(0 < len(texts) < nkeys and all("gather" in x and "int8" in x for x in texts),
          "typing 'gather int8' in the filter narrows the table to %d rows" % len(texts))
    check("q=gather+int8" in b.eval("location.hash"), "the filter is kept in the URL")
    set_filter(b, "")
    check(int(b.eval(STATUS)["rows"]) == nkeys, "clearing the filter shows every row")
    b.eval("var s = document.getElementById('dtype'); s.value = 'int8'; "
           "s.dispatchEvent(new Event('change'))")
    texts = visible_rows_text(b)
    check(texts and all("int8" in x for x in texts), "the dtype menu keeps int8 (%d)" % len(texts))
    b.eval("document.querySelector('th[data-sort=\"change\"]').click()")
    b.eval("document.querySelector('th[data-sort=\"change\"]').click()")
    chg = b.eval("Array.from(document.querySelectorAll('#view table.overview')[0].tBodies[0].rows)"
                 ".map(r => parseFloat(r.cells[1].textContent)).filter(isFinite)")
    check(len(chg) > 1 and chg == sorted(chg, reverse=True), "sorting by change, twice: best first")
    link, before = b.eval("location.href"), visible_rows_text(b)
    check("dtype=int8" in link and "sort=-change" in link, "menu and sort in the URL: " + link)
    b.open("about:blank", "true")  # (a new hash alone would not load the page again)
    b.open(link, READY)
    check(b.eval("document.getElementById('dtype').value") == "int8" and
          visible_rows_text(b) == before and
          b.eval("document.querySelector('th.on').getAttribute('data-sort')") == "change",
          "the link opens the same view")
    b.open("about:blank", "true")
    b.open(link.split("#")[0], READY)


def drive_compare(b):
    """The Runs view links a run to its keys against the run before: kgate
    compare's table, computed in the page; two other runs from its menus."""
    st = goto(b, "#runs")
    link = b.eval("document.querySelector('#runs tbody tr a').getAttribute('href')")
    nruns = int(st["rows"])
    check(link == "#compare/%d/%d" % (nruns - 2, nruns - 1), "the newest run links to %s" % link)
    b.eval("document.querySelector('#runs tbody tr a').click()")
    st = goto(b, link)
    first = b.eval("Array.from(document.querySelectorAll('#compare tbody tr'))"
                   ".map(r => Array.from(r.cells).map(c => c.textContent))"
                   ".filter(r => r[1].indexOf('probe') < 0).slice(0, 3)")
    summary = b.eval("document.getElementById('compare-summary').textContent")
    check(int(st["rows"]) > 20 and all(r[0] == "SLOWER" and float(r[5][:-1]) < -4 for r in first),
          "compare with the run before: %s keys, SLOWER first (%s)" % (st["rows"], first[:1]))
    check("geomean NEW/BASE 0.9" in summary and " SLOWER" in summary, "its summary: " + summary)
    b.eval("var s = document.querySelectorAll('#view select.pick')[0]; s.value = '0'; "
           "s.dispatchEvent(new Event('change', {bubbles: true}))")
    st = goto(b, "#compare/0/%d" % (nruns - 1))
    check(b.eval("location.hash").startswith("#compare/0/%d" % (nruns - 1)) and
          int(st["rows"]) > 20, "the base menu compares two chosen runs (%s)" % b.eval("location.hash"))
    b.screenshot(os.path.join(os.path.dirname(b.eval("location.pathname")), "compare.png"))


def drive_four_gpus(b, out, exe):
    """The recorded H100 runs on board 3ed4dcd2 alone (device "cuda") and on
    four boards (cuda:0..3): one GPU column, one series per board UUID."""
    files = [os.path.join(HERE, "..", "data", "4xh100-device-%s-3ed4dcd2-2026-11-27.csv" % d)
             for d in ("all", "0")]
    uuids = set()
    for f in files:
        uuids |= {r["gpu_uuid"][:12] + "\u2026" for r in csv.DictReader(open(f))}
    four = os.path.join(out, "four-gpus.html")
    kgate(exe, "dashboard", "--results", *files, "--out", four)
    b.open("file://" + four + "#overview?q=cuda%3A1", READY)
    texts = b.eval("Array.from(document.querySelectorAll('#view tbody tr'))"
                   ".map(r => (r.textContent + r.title).toLowerCase())")
    check(len(texts) == 41 and all("cuda:1" in x and "h100 80gb hbm3 \u00d74" in x for x in texts),
          "four GPUs: one row per key, one GPU column, 'cuda:1' keeps %d rows" % len(texts))
    key = next(i for i, k in enumerate(page_data(four)["keys"]) if k["n"] == "gemv")
    goto(b, "#key/%d" % key)
    series = b.eval("Array.from(document.querySelectorAll('#view svg.kb-chart path.bs'))"
                    ".map(p => p.getAttribute('data-board'))")
    check(sorted(series) == sorted(uuids), "one series per board UUID: %s" % series)
    b.screenshot(os.path.join(out, "four-gpus.png"))
    set_filter(b, "")
    goto(b, "#runs")
    runs = b.eval("Array.from(document.querySelectorAll('#runs tbody tr'))"
                  ".map(r => [r.cells[3].textContent, r.cells[9].textContent])")
    check(len(runs) == 2 and runs[0][0].count("GPU-") == 1 and runs[1][0].count("GPU-") == 4,
          "runs: their boards (%s)" % [r[0] for r in runs])
    check("(kgate check)" in runs[0][1] and "(kgate check)" not in runs[1][1],
          "the gated run is the newest one (%s)" % [r[1] for r in runs])


def set_filter(b, text):
    b.eval("var f = document.getElementById('filter'); f.value = %s; "
           "f.dispatchEvent(new Event('input'))" % json.dumps(text))


def drop_page(d, exe, targets, drop=0.06):
    """The recorded 20-night H100 history with every kernel `drop` slower on
    its last night (a broad regression)."""
    src = os.path.join(HERE, "..", "data", "h100-20runs-19e69e82-2026-11-26.csv")
    out = os.path.join(d, "h100-drop.csv")
    with open(src, newline="") as f, open(out, "w", newline="") as g:
        rows = list(csv.DictReader(f))
        last = max(r["run_id"] for r in rows)
        w = csv.DictWriter(g, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            if r["run_id"] == last and "probe" not in r["name"] and r["actual"]:
                slower = "(us)" in r["metric"]
                r["actual"] = repr(float(r["actual"]) * (1 + drop if slower else 1 - drop))
            w.writerow(r)
    page = os.path.join(d, "drop.html")
    kgate(exe, "dashboard", "--results", out, "--targets", targets, "--out", page)
    return page


def drive_error_bar(b, drop_csv, page):
    """A run's error bar spans its row's min_us..max_us in the metric (GB/s
    at max_us is the low end): read off the drawn path and the y axis."""
    rows = list(csv.DictReader(open(drop_csv)))
    last = max(r["run_id"] for r in rows)
    mine = [r for r in rows if r["run_id"] == last and "probe" not in r["name"] and
            "(us)" not in r["metric"] and r["max_us"] and r["min_us"] and r["median_us"] and
            float(r["max_us"]) < 1.08 * float(r["median_us"])][0]
    a, med = float(mine["actual"]), float(mine["median_us"])
    want = (a * med / float(mine["max_us"]), a * med / float(mine["min_us"]))
    key = next(i for i, k in enumerate(page_data(page)["keys"]) if
               [k["n"], k["s"], k["d"], k["m"]] == [mine[c] for c in ("name", "shape", "dtype", "metric")])
    goto(b, "#key/%d" % key)
    got = b.eval("""(function () {
      var svg = document.querySelector('#view svg.kb-chart'), t = [];
      svg.querySelectorAll('text.ax[text-anchor=end]').forEach(function (e) {
        t.push([+e.getAttribute('y') - 3, parseFloat(e.textContent)]); });
      var a = t[0], z = t[t.length - 1], s = (z[1] - a[1]) / (z[0] - a[0]);
      var m = svg.querySelector('path.err').getAttribute('d').match(/M[-\\d.]+ [-\\d.]+V[-\\d.]+/g);
      var e = m[m.length - 1].slice(1).split(/[ V]/).map(Number);
      return [a[1] + (e[1] - a[0]) * s, a[1] + (e[2] - a[0]) * s, Math.abs(s)]; })()""")
    lo, hi, px = got
    check(abs(lo - want[0]) < 2 * px and abs(hi - want[1]) < 2 * px,
          "the newest run's error bar spans its min-max time: %.1f to %.1f (%s: %.1f to %.1f)"
          % (lo, hi, mine["name"], want[0], want[1]))


def drive_shared_x(b, exe, out):
    """The Charts grid puts a key's GPU models on one x range: the H100
    nights and the H200 ones two days later."""
    page = os.path.join(out, "two-models.html")
    kgate(exe, "dashboard", "--results", os.path.join(HERE, "..", "data",
          "h100-20runs-19e69e82-2026-11-26.csv"), os.path.join(HERE, "..", "data",
          "h200x2-aa-bc80f3b-2026-11-28.csv"), "--out", page)
    ks = page_data(page)["keys"]
    ids = {}
    for i, k in enumerate(ks):
        ids.setdefault((k["n"], k["s"], k["d"], k["m"]), []).append(i)
    n, s_, d, m = k = next(k for k, v in ids.items() if len(v) == 2 and "probe" not in k[0])
    b.open("file://" + page, READY)
    goto(b, "#charts")
    set_filter(b, "%s [%s] %s %s" % (n, s_, d, m))
    axes = b.eval("""%s.map(function (i) {
      var c = document.querySelector('#view .card a[href="#key/' + i + '"]').closest('.card');
      return Array.from(c.querySelectorAll('svg text.ax[y="164"]')).map(function (t) {
        return t.getAttribute('x') + ' ' + t.textContent; }).join(', '); })""" % json.dumps(ids[k]))
    check(axes[0] and axes[0] == axes[1], "charts grid: the H100 and H200 of %s share one x range "
          "(%s)" % (n, axes))


def drive_phone(b, page, out):
    """At 390 px (a phone): no page-wide sideways scroll, the overview's table
    scrolls inside its box with the verdict and change in view, charts fit."""
    b.viewport(390, 844, mobile=True)
    try:
        b.open("about:blank", "true")
        b.open("file://" + page, READY)
        wide = b.eval("document.documentElement.scrollWidth")
        check(wide <= 392, "at 390 px the page is not wider than the screen (%d px)" % wide)
        cell = b.eval("(() => { const r = document.querySelector('#view table.overview')"
                      ".tBodies[0].rows[0]; const c = r.cells[1].getBoundingClientRect();"
                      " return [r.cells[0].textContent, r.cells[1].textContent, c.right]; })()")
        check(cell[0] == "FAIL" and cell[1].startswith("-6.") and cell[2] <= 390,
              "at 390 px the first row's verdict and change are on screen: %s" % cell)
        b.screenshot(os.path.join(out, "phone-overview.png"))
        goto(b, "#charts")
        widths = b.eval("Array.from(document.querySelectorAll('#view svg.kb-chart'))"
                        ".map(s => s.getBoundingClientRect().right)")
        check(len(widths) > 0 and max(widths) <= 390,
              "at 390 px every chart fits the screen (rightmost edge %s px)"
              % (max(widths) if widths else None))
        b.screenshot(os.path.join(out, "phone-charts.png"))
    finally:
        b.viewport(1400, 900)
        b.open("about:blank", "true")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kgate", required=True)
    ap.add_argument("--gen-history", required=True, help="tests/support's gen_history")
    ap.add_argument("--targets", required=True)
    ap.add_argument("--out", required=True, help="folder for the pages and screenshots")
    a = ap.parse_args()

    exe = find_chromium()
    if not exe:
        print("SKIP: no Chromium found (install the Debian package chromium, e.g. with "
              "KBENCH_BROWSER_TESTS=1 tools/setup.sh, or set KBENCH_CHROMIUM): the dashboard's "
              "browser test did not run")
        return 77
    os.makedirs(a.out, exist_ok=True)

    # The pages.
    samples = [os.path.join(HERE, "data", f) for f in
               ("h100-2026-11-24-sample.csv", "h200-2026-11-24-sample.csv")]
    hist = os.path.join(a.out, "synthetic-history.csv")
    kgate(a.gen_history, "--from", *samples, "--runs", "90", "--attempts", "--out", hist)
    site = os.path.join(a.out, "site")
    kgate(a.kgate, "dashboard", "--results", hist, *samples, "--targets", a.targets, "--out", site)
    page = os.path.join(site, "index.html")
    data = json.loads(open(page).read().split('id="kb-data">', 1)[1].split("</script>", 1)[0])
    bad = os.path.join(a.out, "bad-input.html")
    kgate(a.kgate, "dashboard", "--results", *bad_input(a.out), "--out", bad)
    two_boards = os.path.join(a.out, "two-boards.html")
    kgate(a.kgate, "dashboard", "--results", TWO_BOARDS, "--targets", a.targets, "--out",
          two_boards)
    one_board = os.path.join(a.out, "one-board.html")
    kgate(a.kgate, "dashboard", "--results", first_board(a.out), "--targets", a.targets, "--out",
          one_board)

    drop = drop_page(a.out, a.kgate, a.targets)
    big = os.path.join(a.out, "big-history.csv")
    kgate(a.gen_history, "--out", big, "--runs", "100", "--keys", "1000", "--drop", "0.06",
          "--dropped-keys", "30")
    big_page = os.path.join(a.out, "big.html")
    kgate(a.kgate, "dashboard", "--results", big, "--out", big_page)

    b = Browser(exe)
    try:
        # A 6% drop on the last of 20 real nights: the failing keys come first.
        t = b.open("file://" + drop, READY)
        first = b.eval("Array.from(document.querySelector('#view table.overview').tBodies[0]"
                       ".rows).slice(0, 5).map(r => r.textContent)")
        check(all(x.startswith("FAIL-6.") and "since " in x for x in first),
              "6%% drop: the first rows are FAIL -6.x%% since <run> (%s)" % first[:1])
        b.screenshot(os.path.join(a.out, "overview-drop.png"))
        goto(b, "#charts")
        off = b.eval("Array.from(document.querySelectorAll('#view svg text.tgt-off'))"
                     ".map(t => t.textContent)")
        check(len(off) >= 1 and all("target" in t for t in off),
              "a target far from the data is named at the chart's edge: %s" % off)
        b.screenshot(os.path.join(a.out, "charts-drop.png"))
        check(b.eval("document.querySelectorAll('#view svg.kb-chart path.err').length") >= 20,
              "the charts draw each run's spread as error bars")
        drive_error_bar(b, os.path.join(a.out, "h100-drop.csv"), drop)
        drive_compare(b)
        drive_four_gpus(b, a.out, a.kgate)
        drive_shared_x(b, a.kgate, a.out)
        drive_phone(b, drop, a.out)
        # 100 000 rows: the first screen (the overview, worst first).
        times = sorted(b.open("file://" + big_page, READY) for _ in range(5))
        st = b.eval(STATUS)
        print("  100k rows: opened in %.2f s (median of 5), page ready at %s ms" %
              (times[2], st["loadMs"]))
        check(times[2] < 1.0 and st["rows"] == "1000", "100k rows open in under a second")

        print("synthetic history (%d rows, %d runs, %d keys): %s" %
              (data["rows"], len(data["runs"]), len(data["keys"]), page))
        t = b.open("file://" + page, READY)
        st = b.eval(STATUS)
        check(st["errors"] == "0", "no script error on load (%s)" % st["error"])
        check(int(st["keys"]) == len(data["keys"]), "all %s keys read" % st["keys"])
        nkeys = len(data["keys"])
        check(int(st["rows"]) == nkeys, "overview: one row per key (%s of %d)" % (st["rows"], nkeys))
        check(b.eval("document.querySelectorAll('#view table.overview td.cell a[href^=\"#key/\"]')"
                     ".length") == min(nkeys, 200), "overview: every row links to its chart")
        print("  opened in %.2f s" % t)
        b.screenshot(os.path.join(a.out, "overview.png"))
        drive_overview(b, nkeys)

        st = goto(b, "#charts")
        want = min(24, len(data["keys"]))
        check(st["charts"] == str(want) and st["chartsWithPoints"] == str(want),
              "charts view: %s charts drawn, %s with points (expected %d)" %
              (st["charts"], st["chartsWithPoints"], want))

        # A key with a history on both GPUs: its chart and its sibling's.
        key = next(i for i, k in enumerate(data["keys"]) if k["n"] == "gather_gemv"
                   and k["d"] == "int8")
        st = goto(b, "#key/%d" % key)
        check(st["charts"] == "2" and st["chartsWithPoints"] == "2",
              "key view: its chart and the other GPU's (%s)" % st["charts"])
        b.eval("var s = document.getElementById('ymode'); s.value = 'fraction'; "
               "s.dispatchEvent(new Event('change'))")
        st = b.eval(STATUS)
        check(st["chartsWithPoints"] == "2", "y axis switched to the roofline fraction")
        b.screenshot(os.path.join(a.out, "trend.png"))
        b.eval("var s = document.getElementById('ymode'); s.value = 'value'; "
               "s.dispatchEvent(new Event('change'))")
        with_attempts = next(i for i, k in enumerate(data["keys"]) if k["at"])
        goto(b, "#key/%d" % with_attempts)
        check(b.eval("document.querySelectorAll('#view svg.kb-chart path.att').length") > 0,
              "attempts drawn as extra markers")

        check(b.eval(BOARD_MARKS) == 0, "no board-change marker without UUIDs")

        st = goto(b, "#runs")
        check(int(st["rows"]) == len(data["runs"]), "runs view: %s runs listed" % st["rows"])
        own = {}
        for r in csv.DictReader(open(hist)):
            if "/" not in r["run_id"]:
                own[r["run_id"]] = own.get(r["run_id"], 0) + 1
        counted = {r[0]: sum(r[7]) for r in data["runs"] if r[0] in own}
        check(counted == own, "runs: row counts leave re-measurements out")
        check(not b.errors, "no console error or exception: %s" % b.errors[:3])

        # Boards: the real two-board H100 history (14 runs on its first
        # board, then 10 on the second), and its first board alone.
        for path, marks in ((two_boards, 1), (one_board, 0)):
            b.errors.clear()
            pdata = page_data(path)
            key = next(i for i, k in enumerate(pdata["keys"]) if k["n"] == "mlp_layer_norm_gelu"
                       and k["s"] == "tokens=4096;D=16384" and k["d"] == "bfloat16"
                       and k["m"] == "tflops")
            print("boards %s: %s" % (pdata["boards"], path))
            b.open("file://" + path, READY)
            st = goto(b, "#key/%d" % key)
            check(st["errors"] == "0" and st["chartsWithPoints"] == "1",
                  "%d board(s): the MLP D=16384 chart draws" % len(pdata["boards"]))
            check(b.eval(BOARD_MARKS) == marks, "%d board(s): %d board-change marker(s) (%d)" %
                  (len(pdata["boards"]), marks, b.eval(BOARD_MARKS)))
            # The newest point's tooltip names its board.
            tip = b.eval("(function () { var o = document.querySelector("
                         "'#view svg.kb-chart rect[fill=transparent]'), "
                         "r = o.getBoundingClientRect(); "
                         "o.dispatchEvent(new MouseEvent('mousemove', "
                         "{clientX: r.right - 1, clientY: r.top + 20, bubbles: true})); "
                         "return document.getElementById('tip').textContent; })()")
            newest = "GPU-51eb0d65" if marks else "GPU-ee41fd8f"
            check("board " + newest in tip, "the newest point's tooltip names %s" % newest)
            if marks:
                title = b.eval("(document.querySelector('#view g.board-change title') || {})"
                               ".textContent || ''")
                check(title.startswith("board GPU-51eb0d65") and " from run " in title,
                      "the marker's title: %s" % title)
                check("F" not in pdata["keys"][key]["ve"],
                      "the gate's board rule: no FAIL where the key moves board (%s)"
                      % pdata["keys"][key]["ve"])
                b.screenshot(os.path.join(a.out, "board-change.png"))
            check(not b.errors, "no console error or exception: %s" % b.errors[:3])

        print("bad input: %s" % bad)
        b.errors.clear()
        b.open("file://" + bad, READY)
        st = b.eval(STATUS)
        check(st["errors"] == "0", "no script error on load (%s)" % st["error"])
        notes = b.eval("document.getElementById('missing').textContent")
        for what in ("no git_sha", "no target", "without run ids", "without arch"):
            check(what in notes, "says what is missing: '%s'" % what)
        check(b.eval("typeof window.kbPwned") == "undefined" and
              b.eval("document.querySelectorAll('img, td b, td i').length") == 0 and
              b.eval("document.scripts.length") == 2,
              "names with markup stay inert")
        check(b.eval("document.getElementById('view').textContent.indexOf("
                     "'<img src=x onerror=\"window.kbPwned=1\">') >= 0"),
              "a name with markup is shown as text")
        st = goto(b, "#charts")
        check(st["charts"] == str(len(json.loads(open(bad).read().split('id="kb-data">', 1)[1]
                                                 .split("</script>", 1)[0])["keys"])),
              "every key of the bad input has a chart (%s)" % st["charts"])
        st = goto(b, "#key/0")
        check(st["errors"] == "0", "a key with one run draws")
        b.screenshot(os.path.join(a.out, "bad-input.png"))
        check(not b.errors, "no console error or exception: %s" % b.errors[:3])

        # The bring-up report (kgate bringup) of the recorded H200 run
        # against the recorded H100 run: a page with no script at all.
        rec = os.path.join(HERE, "..", "data")
        bring = os.path.join(a.out, "bringup")
        kgate(a.kgate, "bringup", "--results", os.path.join(rec, "h200-2026-11-24.csv"),
              "--reference", os.path.join(rec, "h100-2026-11-24.csv"), "--targets", a.targets,
              "--out", bring)
        page = os.path.join(bring, "bringup.html")
        print("bring-up report: %s" % page)
        b.errors.clear()
        b.open("file://" + page, "document.readyState === 'complete'")
        check(b.eval("document.scripts.length") == 0, "bring-up: no script in the page")
        check(b.eval("document.querySelectorAll('table').length") == 3,
              "bring-up: ceilings, rows and A100 tables")
        cand = b.eval("document.querySelectorAll('tr:has(> td:first-child > b)').length")
        check(cand > 0, "bring-up: %d tuning candidates marked" % cand)
        check(b.eval("Array.from(document.querySelectorAll('p, li, td')).every(e => "
                     "e.textContent.indexOf('`') < 0) && "
                     "document.querySelectorAll('p code, td code').length > 0"),
              "bring-up: Markdown code spans rendered, no backtick shown")
        check("NVIDIA H200" in b.eval("document.querySelector('h1').textContent"),
              "bring-up: the title names the GPU")
        b.screenshot(os.path.join(a.out, "bringup.png"))
        check(not b.errors, "bring-up: no console error or exception: %s" % b.errors[:3])
    finally:
        b.close()
    print("screenshots in " + a.out)
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("dashboard browser test passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
