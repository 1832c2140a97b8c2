#!/usr/bin/python3
"""Drives Debian's chromium, headless, through the DevTools protocol (python3-websocket) to check
`sync-agent serve`'s status page as a person would see it.

    status_page.py URL --expect-objects N --expect-author A -- COMMAND...

Loads URL, waits until the page shows its change stream live, runs COMMAND (an import, say), and
then reads the page until it shows T as the head token, N objects and the transaction's row; it
prints one JSON object: how long after COMMAND ended the page showed it ("shown_after_seconds",
null when it did not within --deadline), what the page showed, and what the browser's console
said. --screenshot PATH saves a PNG of the page at the end (after --settle seconds).
--token-form checks instead that a page served by a token-protected server asks for the token.
"""
import argparse
import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

import websocket

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


class Browser:
    """A headless chromium in a temporary profile, stopped and removed on close."""

    def __init__(self):
        self.profile = tempfile.mkdtemp(prefix="ambar-chromium-")
        self.process = subprocess.Popen(
            [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
             "--remote-debugging-port=0", "--remote-allow-origins=*", "--user-data-dir=" + self.profile,
             "--window-size=1280,1000", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
            # Chromium keeps its process-singleton socket in a directory of its own under TMPDIR
            # (org.chromium.Chromium.*), which a killed browser leaves behind: inside the profile,
            # it goes with it.
            env=dict(os.environ, TMPDIR=self.profile))
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.monotonic() + 60
        while not (os.path.exists(port_file) and open(port_file).read().count("\n") >= 1):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("chromium did not start its DevTools endpoint (scripts/install-deps --tests installs it)")
            time.sleep(0.05)
        port = int(open(port_file).read().split("\n")[0])
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10))
        page = next(t for t in targets if t["type"] == "page")
        self.socket = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=30, suppress_origin=True)
        self.next_id = 0
        self.console = []
        self.call("Runtime.enable")
        self.call("Page.enable")

    def call(self, method, **params):
        self.next_id += 1
        ident = self.next_id
        self.socket.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("method") == "Runtime.consoleAPICalled":
                self.console.append(" ".join(str(a.get("value", a.get("description", ""))) for a in message["params"]["args"]))
            elif message.get("method") == "Runtime.exceptionThrown":
                self.console.append("exception: " + message["params"]["exceptionDetails"].get("exception", {}).get("description", "?"))
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result["result"].get("value")

    def wait_for(self, expression, timeout):
        """Polls `expression` until it is truthy; returns the seconds it took, or None."""
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            if self.evaluate(expression):
                return time.monotonic() - start
            time.sleep(0.02)
        return None

    def close(self):
        try:
            self.socket.close()
        finally:
            # Chromium's helpers (zygote, renderers, crashpad) are in its session's process group
            # and write into the profile: all of them stop before it is removed, or the removal
            # races their last writes and leaves the directory behind.
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            # Killed, a helper may still be exiting with a file open: removal is tried again until
            # the profile is gone, and a profile that cannot be removed is an error, not a leak.
            deadline = time.monotonic() + 10
            while os.path.exists(self.profile):
                shutil.rmtree(self.profile, ignore_errors=time.monotonic() < deadline)


SHOWN = """(() => {
  const text = (id) => document.getElementById(id).textContent;
  // Each row as its cells' texts joined by one space.
  const cells = (selector) => Array.from(document.querySelectorAll(selector)).map(
    (row) => Array.from(row.cells).map((cell) => cell.textContent.trim()).join(" "));
  return {connection: text("connection"), head: text("head-token"), objects: text("objects-total"),
          rows: cells("#transactions tr"),
          hub: text("hub-state"), peers: text("peer-count"), latency: text("latency-summary"),
          latency_points: Number(document.getElementById("latency-summary").dataset.count || 0),
          consumers: cells("#consumers tr"), inboxes: cells("#inboxes tr"), peer_rows: cells("#peers tr"),
          error: text("error"), token_form: document.getElementById("token-form").classList.contains("shown")};
})()"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--expect-objects", type=int)
    parser.add_argument("--expect-author")
    parser.add_argument("--deadline", type=float, default=2.0)
    parser.add_argument("--screenshot")
    parser.add_argument("--settle", type=float, default=0)
    parser.add_argument("--token-form", action="store_true")
    arguments = sys.argv[1:]
    command = arguments[arguments.index("--") + 1:] if "--" in arguments else []
    options = parser.parse_args(arguments[:arguments.index("--")] if "--" in arguments else arguments)
    options.command = command

    browser = Browser()
    report = {}
    try:
        browser.call("Page.navigate", url=options.url)
        if options.token_form:
            report["asked_for_token"] = browser.wait_for('document.getElementById("token-form").classList.contains("shown")', 30) is not None
            report["shown"] = browser.evaluate(SHOWN)
            return report
        report["live_after_seconds"] = browser.wait_for(
            'document.getElementById("connection").textContent === "live" && document.getElementById("head-token").textContent !== "–"', 30)
        report["before"] = browser.evaluate(SHOWN)
        if options.command:
            started = time.monotonic()
            run = subprocess.run(options.command, capture_output=True, text=True)
            report["command"] = {"status": run.returncode, "seconds": time.monotonic() - started, "error": run.stderr[-2000:]}
            # The command's transaction is the newest row, by its author, and the head is its token.
            condition = ('(() => { const row = document.querySelector("#transactions tr"); if (!row) return false;'
                         ' const cells = Array.from(row.cells).map((cell) => cell.textContent.trim());'
                         f' return document.getElementById("objects-total").textContent === {json.dumps(str(options.expect_objects))}'
                         f' && cells.join(" ").includes({json.dumps(options.expect_author)})'
                         ' && document.getElementById("head-token").textContent === cells[0]; })()')
            report["shown_after_seconds"] = browser.wait_for(condition, options.deadline)
            report["after"] = browser.evaluate(SHOWN)
            # The latency plot takes the merge from the next read of /v1/latency (at most 5 s later).
            report["plotted_after_seconds"] = browser.wait_for(
                'Number(document.getElementById("latency-summary").dataset.count || 0) >= 1', 30)
            report["plotted"] = browser.evaluate(SHOWN)
        if options.settle:
            time.sleep(options.settle)
        if options.screenshot:
            shot = browser.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
            with open(options.screenshot, "wb") as file:
                file.write(base64.b64decode(shot["data"]))
        return report
    finally:
        report["console"] = browser.console
        browser.close()
        print(json.dumps(report))


if __name__ == "__main__":
    main()
