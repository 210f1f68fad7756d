"""A small Chrome DevTools Protocol client over --remote-debugging-pipe
(standard library only): starts headless Chromium, opens a page, runs
script in it, types, takes screenshots, and collects console errors and
uncaught exceptions."""

import base64
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import time


def find_chromium():
    """The browser to use: $KBENCH_CHROMIUM, else the first one on PATH."""
    env = os.environ.get("KBENCH_CHROMIUM")
    if env:
        return env if shutil.which(env) or os.access(env, os.X_OK) else None
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    def __init__(self, exe, width=1400, height=900):
        self.profile = tempfile.mkdtemp(prefix="kb-chromium-")
        to_chrome_r, to_chrome_w = os.pipe()
        from_chrome_r, from_chrome_w = os.pipe()

        def child_fds():
            # Chromium reads commands on fd 3 and writes replies on fd 4
            # (moved out of the way first: the pipes may be on 3 and 4).
            r = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD, 10)
            w = fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD, 10)
            os.dup2(r, 3)
            os.dup2(w, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        args = [exe, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                "--remote-debugging-pipe", "--user-data-dir=" + self.profile,
                "--window-size=%d,%d" % (width, height), "about:blank"]
        self.proc = subprocess.Popen(args, close_fds=False, preexec_fn=child_fds, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.w = os.fdopen(to_chrome_w, "wb", buffering=0)
        self.r = os.fdopen(from_chrome_r, "rb", buffering=0)
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.errors = []
        targets = self.call("Target.getTargets")["targetInfos"]
        page = [t for t in targets if t["type"] == "page"][0]
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"],
                                 flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(domain + ".enable", session=True)
        self.viewport(width, height)

    def viewport(self, width, height, mobile=False):
        """The page's size in CSS pixels; `mobile` as a phone lays it out."""
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=width, height=height,
                  deviceScaleFactor=1, mobile=mobile)

    def _read_message(self, deadline):
        while b"\0" not in self.buf:
            if time.time() > deadline:
                raise TimeoutError("no answer from chromium")
            chunk = self.r.read(1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the pipe (crashed?)")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def _note(self, m):
        method, p = m.get("method"), m.get("params", {})
        if method == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            self.errors.append("exception: " + d.get("exception", {}).get("description", d.get("text", "")))
        elif method == "Runtime.consoleAPICalled" and p["type"] in ("error", "assert"):
            self.errors.append("console.%s: %s" % (p["type"], " ".join(
                str(a.get("value", a.get("description", ""))) for a in p["args"])))
        elif method == "Log.entryAdded" and p["entry"]["level"] == "error":
            self.errors.append("log: " + p["entry"]["text"])
        self.events.append(m)

    def call(self, method, session=False, timeout=60, **params):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        self.w.write(json.dumps(msg).encode() + b"\0")
        deadline = time.time() + timeout
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            self._note(m)

    def wait_event(self, method, timeout=60):
        for i, m in enumerate(self.events):
            if m.get("method") == method:
                del self.events[i]
                return m
        deadline = time.time() + timeout
        while True:
            m = self._read_message(deadline)
            self._note(m)
            if m.get("method") == method:
                self.events.remove(m)
                return m

    def eval(self, expr):
        r = self.call("Runtime.evaluate", session=True, expression=expr, returnByValue=True,
                      awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError("script failed: %s" % r["exceptionDetails"])
        return r["result"].get("value")

    def open(self, url, ready_expr, timeout=30):
        """Navigates and waits until `ready_expr` is true; returns the seconds taken."""
        self.events = [e for e in self.events if e.get("method") != "Page.loadEventFired"]
        t0 = time.time()
        self.call("Page.navigate", session=True, url=url)
        self.wait_event("Page.loadEventFired", timeout)
        # (A load event of the page before may arrive late: also wait for the URL.)
        # (The page may rewrite its hash to the state it shows.)
        check = "(function () { try { return location.href.split('#')[0] === %s && !!(%s); } " \
                "catch (e) { return false; } })()" % (json.dumps(url.split("#")[0]), ready_expr)
        while not self.eval(check):
            if time.time() - t0 > timeout:
                raise TimeoutError("page not ready: " + url)
            time.sleep(0.02)
        return time.time() - t0

    def type_text(self, selector, text):
        self.eval("document.querySelector(%s).focus()" % json.dumps(selector))
        self.call("Input.insertText", session=True, text=text)

    def screenshot(self, path, full_page=False):
        params = {"format": "png"}
        if full_page:
            params["captureBeyondViewport"] = True
        data = self.call("Page.captureScreenshot", session=True, **params)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        try:
            self.call("Browser.close", timeout=10)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)
