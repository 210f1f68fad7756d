#!/usr/bin/env python3
"""How long a dashboard page takes to open in headless Chromium: from the
navigation to the page's own 'ready' (overview drawn), over N fresh loads;
also the Charts view (24 trend charts) and one key's view. Used for the
numbers in docs/dashboard.md; not a test.

  python3 tests/browser/measure_open.py PAGE.html [--repeat 5] [--shots DIR KEY]"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import Browser, find_chromium  # noqa: E402

READY = "document.getElementById('kb-status').getAttribute('data-state') === 'ready'"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("page")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--shots", nargs=2, metavar=("DIR", "KEY"),
                    help="save overview.png and trend.png (key KEY) in DIR")
    a = ap.parse_args()
    exe = find_chromium()
    if not exe:
        sys.exit("no Chromium found")
    url = "file://" + os.path.abspath(a.page)
    b = Browser(exe)
    try:
        walls, in_page, charts, key = [], [], [], []
        for _ in range(a.repeat):
            b.call("Page.navigate", session=True, url="about:blank")
            time.sleep(0.2)
            walls.append(b.open(url, READY))
            in_page.append(float(b.eval("document.getElementById('kb-status').dataset.loadMs")))
            t0 = time.time()
            b.eval("location.hash = '#charts'")
            while b.eval("document.getElementById('kb-status').dataset.view") != "charts":
                time.sleep(0.005)
            charts.append(time.time() - t0)
            t0 = time.time()
            b.eval("location.hash = '#key/100'")
            while b.eval("document.getElementById('kb-status').dataset.view") != "key":
                time.sleep(0.005)
            key.append(time.time() - t0)
        print("%s: %.2f MB" % (a.page, os.path.getsize(a.page) / 1e6))
        print("open (navigation to overview drawn), wall: median %.3f s, max %.3f s over %d loads"
              % (statistics.median(walls), max(walls), len(walls)))
        print("open, in-page (performance.now at ready): median %.0f ms" % statistics.median(in_page))
        print("charts view (24 charts): median %.3f s; key view: median %.3f s"
              % (statistics.median(charts), statistics.median(key)))
        print("errors: %s" % (b.errors or "none"))
        if a.shots:
            d, k = a.shots
            b.open(url, READY)
            b.screenshot(os.path.join(d, "overview.png"))
            b.eval("location.hash = '#key/%s'" % k)
            time.sleep(0.5)
            b.screenshot(os.path.join(d, "trend.png"))
    finally:
        b.close()


if __name__ == "__main__":
    main()
