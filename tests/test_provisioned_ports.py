"""A port another process takes between benchlib's choice and the server's bind
(issue 37): the server starts on another one; taken every time, one line saying so, and
nothing left running."""
from __future__ import annotations

import shutil
import socket

import pytest
from resuming import alive

from benchlib.targets import provisioning
from benchlib.targets.base import TargetError, make_target

# MariaDB's start takes the same path (provisioning.on_a_free_port); left out for time
URLS = ["postgres-provisioned",
        pytest.param("redis-provisioned", marks=pytest.mark.skipif(shutil.which("redis-server") is None,
                                                                     reason="no redis-server here"))]


@pytest.fixture
def taken():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    yield s.getsockname()[1]
    s.close()


@pytest.mark.parametrize("url", URLS)
def test_a_port_taken_meanwhile_is_another_try_then_one_line(url, taken, tmp_path, monkeypatch):
    free = provisioning.free_port
    offered = []

    def first_taken():
        offered.append(taken if not offered else free())
        return offered[-1]
    monkeypatch.setattr(provisioning, "free_port", first_taken)
    t = make_target("portbusy", url, {}, tmp_path)
    t.set_run_dir(tmp_path / "run")
    t.start()
    try:
        pid = t._proc.pid
        assert offered[0] == taken and len(offered) >= 2 and t.endpoint() is not None
    finally:
        t.stop()
    assert not alive(pid)

    monkeypatch.setattr(provisioning, "free_port", lambda: taken)   # taken every time
    t = make_target("portbusy", url, {}, tmp_path)
    t.set_run_dir(tmp_path / "run2")
    with pytest.raises(TargetError) as e:
        t.start()
    pids = [p.pid for p in (t._proc, getattr(t._watchdog, "proc", None)) if p is not None]
    t.stop()
    msg = str(e.value)
    assert "\n" not in msg and any(w in msg for w in provisioning.PORT_TAKEN), msg
    assert not any(alive(p) for p in pids)
