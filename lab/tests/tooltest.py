"""What the tests of lab/tools/*.py share: running a tool on a made-up CSV,
checks that collect their failures, and the bad input every such tool
answers alike (a missing file, a CSV without kbench's columns, no
arguments: exit 2 and one line)."""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class ToolTest:
    def __init__(self, tool):
        self.tool = tool  # e.g. "process_stat_sim"
        self.failures = []

    def check(self, cond, what):
        if not cond:
            self.failures.append(what)

    def run(self, *args):
        path = os.path.join(ROOT, "lab", "tools", self.tool + ".py")
        return subprocess.run([sys.executable, path, *args], capture_output=True, text=True)

    def run_on(self, text, *args):
        """The tool on a temporary file holding `text` (args before it)."""
        with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
            f.write(text)
        try:
            return self.run(*args, f.name)
        finally:
            os.unlink(f.name)

    def bad_input(self):
        p = self.run(os.path.join(ROOT, "no-such-file.csv"))
        self.check(p.returncode == 2 and p.stderr.startswith(self.tool + ": "),
                   f"missing file: {p.returncode} {p.stderr}")
        p = self.run_on("a,b\n1,2\n")
        self.check(p.returncode == 2 and "missing column" in p.stderr,
                   f"not a results CSV: {p.returncode} {p.stderr}")
        p = self.run()
        self.check(p.returncode == 2 and "usage" in p.stderr, f"no arguments: {p.returncode} {p.stderr}")

    def finish(self):
        if self.failures:
            print("FAILED:\n  " + "\n  ".join(self.failures))
            sys.exit(1)
        print(self.tool + ": all checks passed")
