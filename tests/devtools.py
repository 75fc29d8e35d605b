"""Headless Chromium driven over its DevTools protocol: open a page, run JavaScript in it,
move and click the mouse as a user does, and list every request the page made.

The system Chromium (Debian's ``chromium``, which .ci/run installs) and the
``websocket-client`` package (the test extra): no driver binary, nothing downloaded.
A fresh throw-away profile each time, with Chromium's own network chatter off.
"""
from __future__ import annotations

import json
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from browser import chromium

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars"]


class DevToolsError(Exception):
    pass


class Chromium:
    """``with Chromium() as page: page.open(path); page.evaluate("1 + 1")``."""

    def __init__(self, width: int = 1400, height: int = 1000, timeout: float = 60):
        self.size, self.timeout = (width, height), timeout
        self.events: list[dict] = []
        self._id = 0

    def __enter__(self) -> Chromium:
        import websocket
        # Chromium's helper processes may still write in the profile as it is removed
        self._profile = tempfile.TemporaryDirectory(prefix="chromium-", ignore_cleanup_errors=True)
        self.proc = subprocess.Popen(
            [chromium(), *FLAGS, f"--user-data-dir={self._profile.name}", "--remote-debugging-port=0",
             f"--window-size={self.size[0]},{self.size[1]}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = Path(self._profile.name) / "DevToolsActivePort"
        deadline = time.monotonic() + self.timeout
        while not (port_file.is_file() and port_file.read_text().strip()):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.__exit__(None, None, None)
                raise DevToolsError("chromium did not open its DevTools port")
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as r:
            target = next(t for t in json.load(r) if t["type"] == "page")
        self.ws = websocket.create_connection(target["webSocketDebuggerUrl"], timeout=self.timeout,
                                              suppress_origin=True)
        for domain in ("Page", "Network", "Runtime"):
            self.call(f"{domain}.enable")
        return self

    def __exit__(self, *exc) -> None:
        try:
            if getattr(self, "ws", None):
                self.ws.close()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            self._profile.cleanup()

    def call(self, method: str, **params) -> dict:
        """One DevTools command and its result; events on the way are kept in ``events``."""
        self._id += 1
        self.ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self._id:
                if "error" in msg:
                    raise DevToolsError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)

    def open(self, path: Path) -> None:
        """Navigate to a file and wait for its load event."""
        self.call("Page.navigate", url=Path(path).resolve().as_uri())
        self.wait_for(lambda: any(e.get("method") == "Page.loadEventFired" for e in self.events))

    def wait_for(self, done, timeout: float | None = None) -> None:
        import websocket
        deadline = time.monotonic() + (timeout or self.timeout)
        try:
            while not done():
                if time.monotonic() > deadline:
                    raise DevToolsError("timed out waiting")
                self.ws.settimeout(max(0.05, deadline - time.monotonic()))
                try:
                    self.events.append(json.loads(self.ws.recv()))
                except websocket.WebSocketTimeoutException:
                    continue
        finally:
            self.ws.settimeout(self.timeout)

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (a promise awaited)."""
        res = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in res:
            detail = res["exceptionDetails"].get("exception", {}).get("description")
            raise DevToolsError(f"script failed: {detail}")
        return res["result"].get("value")

    def mouse(self, kind: str, x: float, y: float, button: str = "none") -> None:
        """A mouse event at viewport pixel (x, y): moved, pressed or released."""
        self.call("Input.dispatchMouseEvent", type=f"mouse{kind.capitalize()}", x=x, y=y, button=button,
                  clickCount=1 if button != "none" else 0)

    def requests(self) -> list[str]:
        """Every URL the page asked for (its own file included)."""
        return [e["params"]["request"]["url"] for e in self.events
                if e.get("method") == "Network.requestWillBeSent"]

    def console(self) -> list[str]:
        """Console messages and uncaught exceptions of the page."""
        out = [" ".join(str(a.get("value", a.get("description", ""))) for a in e["params"]["args"])
               for e in self.events if e.get("method") == "Runtime.consoleAPICalled"]
        return out + [e["params"]["exceptionDetails"].get("text", "") for e in self.events
                      if e.get("method") == "Runtime.exceptionThrown"]

    def screenshot(self, png: Path) -> Path:
        import base64
        png.parent.mkdir(parents=True, exist_ok=True)
        png.write_bytes(base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"]))
        return png
