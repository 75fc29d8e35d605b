"""Headless Chromium for the report tests: the rendered DOM, console messages, screenshots.

Debian's ``chromium`` (``apt-get install -y chromium``; .ci/run installs it). Every call
starts a fresh browser with a throw-away profile and no network chatter of its own.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

ARTIFACTS = Path(__file__).parent / "artifacts"   # git-ignored
CONSOLE = re.compile(r":CONSOLE[:(]\d*\)?\]\s*(.*)$")


def chromium() -> str | None:
    """The Chromium binary, None when the machine has none."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _run(url: str, *args: str, timeout: float = 90) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="chromium-") as profile:
        cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--no-first-run", "--hide-scrollbars", f"--user-data-dir={profile}", *args, url]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)


@dataclass
class Page:
    dom: str              # the DOM after the page's scripts ran
    console: list[str]    # every console message (a report page has no scripts: none)


def load(path: Path) -> Page:
    """Open ``path`` and return its DOM and console messages."""
    proc = _run(Path(path).resolve().as_uri(), "--enable-logging=stderr", "--v=0", "--dump-dom")
    console = [m.group(1) for line in proc.stderr.splitlines() if (m := CONSOLE.search(line))]
    return Page(proc.stdout, console)


def screenshot(path: Path, png: Path, width: int = 1400, height: int = 3000) -> Path:
    """A screenshot of the top ``height`` pixels of the page at ``width``."""
    png.parent.mkdir(parents=True, exist_ok=True)
    png.unlink(missing_ok=True)
    _run(Path(path).resolve().as_uri(), f"--screenshot={png}", f"--window-size={width},{height}")
    return png
