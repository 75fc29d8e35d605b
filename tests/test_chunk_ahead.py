"""A client's next chunk made while the current one runs (issue 40: a LinkBench requester
stopped 0.1-0.3 s every 20,000 requests making its next chunk; run/chunk_ahead.py).

No timing: the mechanism itself — the next chunk is made (in another thread) before the
loop asks for it, and the chunks handed out are the ones the client draws when called
directly, in the same order: a run's streams are unchanged."""
from __future__ import annotations

import threading
from contextlib import contextmanager

import pytest
from test_linkbench import lb_experiment, run_lb

from benchlib.params import plan, validate
from benchlib.registries.workloads import ref_of
from benchlib.run.chunk_ahead import ChunkAhead, ahead
from benchlib.run.clients import ClientThread, _build_threads, _threads_for, workload_clients
from benchlib.run.recording import CHUNK_OPS
from benchlib.run.tasks import step_tasks
from benchlib.targets.base import make_target
from benchlib.workloads.base import WorkloadSpec


class Maker:
    """next_chunk of a fake client: chunk i is [i] * max_ops, the thread that made it noted."""

    def __init__(self, chunks: int, fail_at: int | None = None):
        self.calls: list[tuple[int, str]] = []
        self.chunks, self.fail_at = chunks, fail_at
        self.made = threading.Event()

    def __call__(self, max_ops):
        i = len(self.calls)
        self.calls.append((max_ops, threading.current_thread().name))
        self.made.set()
        if i == self.fail_at:
            raise ValueError("no chunk")
        return [i] * max_ops if i < self.chunks else None


def test_the_next_chunk_is_made_in_another_thread_before_it_is_asked_for():
    m = Maker(3)
    feed = ChunkAhead(m)
    assert feed(4) == [0, 0, 0, 0]
    assert feed.pending()
    feed.wait_made()                         # made without anyone asking for it
    assert len(m.calls) == 2 and m.calls[1] == (4, "chunk-ahead")
    assert feed(4) == [1] * 4 and feed(4) == [2] * 4
    assert feed(4) is None and not feed.pending() and feed(4) is None
    assert [c[0] for c in m.calls] == [4] * 4   # called as often and with the same size
    assert feed.made == 2 and feed.thread is not None
    feed.thread.join()                       # the client is done: so is its maker


def test_a_stopped_maker_ends():
    feed = ChunkAhead(Maker(100))
    feed(2)
    feed.wait_made()
    feed.stop()
    feed.thread.join()
    assert not feed.thread.is_alive()


def test_an_error_making_a_chunk_ahead_is_raised_where_it_is_taken():
    feed = ChunkAhead(Maker(5, fail_at=1))
    feed(2)
    with pytest.raises(ValueError, match="no chunk"):
        feed(2)


def test_a_client_that_does_not_allow_it_keeps_its_own_next_chunk():
    class Plain:
        def next_chunk(self, n):
            return [n]

    class Ahead(Plain):
        chunks_ahead = True

    plain, made = Plain(), ahead(Ahead())
    assert ahead(plain) is plain and not isinstance(plain.next_chunk, ChunkAhead)
    assert isinstance(made.next_chunk, ChunkAhead) and made.next_chunk(3) == [3]


RUN1 = {"threads": [2], "processes": 1, "loops": 1, "loop_secs": 0.2, "status_interval_s": 60}


def _ycsb(name: str, insert: float = 0) -> dict:
    return {"experiment": name, "workload": "ycsb", "seed": 11,
            "properties": {"recordcount": 2000, "readproportion": 0.5 - insert,
                           "updateproportion": 0.5, "insertproportion": insert,
                           "fieldcount": 2, "fieldlength": 20},
            "targets": [{"name": "s", "url": "sqlite"}], "load": {"threads": 1},
            "run": {**RUN1, "driver": "python"}}


def _kv(name: str, insert: float = 0) -> dict:
    return {"experiment": name, "workload": "kv", "seed": 12,
            "properties": {"table": "ahead_kv", "key_count": 2000, "read": 0.5 - insert,
                           "update": 0.5, "insert": insert},
            "targets": [{"name": "s", "url": "sqlite"}], "load": {"threads": 1, "batch_size": 1000},
            "run": RUN1}


EXPERIMENTS = {"linkbench": lambda name: lb_experiment(name, "sqlite", run=RUN1),
               "ycsb": _ycsb, "kv": _kv}


@contextmanager
def _threads_of_a_run(exp_dict: dict, data_dir):
    """After a short run: the driver's threads for its r.L1 as the step makes them (not
    started), and the same clients made directly (the run's seeds, repetition 1)."""
    rd = run_lb(exp_dict, data_dir)
    exp = validate(exp_dict, "test")
    spec = plan(exp)[0]
    workload = exp.workload_class()({**exp.workload_properties(), **spec.workload_point})
    step = next(s for s in workload.steps(exp, spec) if s.name == "r.L1")
    target = make_target(spec.target.name, spec.target.url, spec.target.options, rd.parent.parent)
    if hasattr(target, "set_run_dir"):
        target.set_run_dir(rd)
    target.start()
    try:
        (task,) = step_tasks(step, WorkloadSpec(ref_of(exp.workload), workload.properties),
                             target.endpoint(), exp_dict["seed"], exp.load.batch_size, 1)
        threads = _build_threads(task, step, [0])
        direct = workload_clients(task, step)
        try:
            yield threads, direct, task, step
        finally:
            for c in [th.client for th in threads] + direct:
                c.close()
    finally:
        target.stop()


@pytest.mark.parametrize("workload", sorted(EXPERIMENTS))
def test_a_runs_clients_hold_their_next_chunk_before_the_step_starts(workload, data_dir):
    """The driver's client threads, as a step makes them: each has its second chunk
    made (or being made) before the step starts; both chunks are the ones the same
    client's streams give when drawn directly."""
    with _threads_of_a_run(EXPERIMENTS[workload](f"ahead-{workload}"), data_dir) as (threads, direct, _, _):
        assert len(threads) == 2 and all(isinstance(t, ClientThread) for t in threads)
        for th, c in zip(threads, direct):
            feed = th.client.next_chunk
            assert isinstance(feed, ChunkAhead) and feed.pending()
            first, second = c.next_chunk(CHUNK_OPS), c.next_chunk(CHUNK_OPS)
            assert _same(th.first, first)
            assert _same(feed(CHUNK_OPS), second)   # made ahead, the same
            assert feed.made == 1 and feed.pending()


@pytest.mark.parametrize("workload", ["ycsb", "kv"])
def test_chunks_that_claim_insert_keys_are_made_when_needed(workload, data_dir):
    """With inserts, a chunk claims keys from the run's counter and draws reads under
    what was acknowledged when it is made: not made ahead."""
    with _threads_of_a_run(EXPERIMENTS[workload](f"ahead-{workload}-ins", 0.1), data_dir) as (threads, _, _, _):
        assert threads and not any(isinstance(th.client.next_chunk, ChunkAhead) for th in threads)


def _same(a, b) -> bool:
    return list(a.codes) == list(b.codes) and repr(list(a.args)) == repr(list(b.args))


def test_a_thread_that_cannot_be_made_leaves_no_maker_nor_connection(data_dir):
    """The second client's first chunk fails as the step makes its threads: the first
    client's maker (started by its first chunk) ends and both clients are closed — in a
    Dask worker, which lives on, neither would be ever."""
    with _threads_of_a_run(EXPERIMENTS["linkbench"]("ahead-fail"), data_dir) as (_, direct, task, step):
        closed = []
        clients = [ahead(c) for c in direct]
        for c in clients:
            c.close = (lambda close, c=c: lambda: (closed.append(c), close())[1])(c.close)

        def fails(n):
            raise ValueError("no chunk here")
        clients[1].next_chunk = fails
        with pytest.raises(ValueError, match="no chunk here"):
            _threads_for(clients, task, step, [0])
        feed = clients[0].next_chunk
        assert isinstance(feed, ChunkAhead) and feed.stopped and closed == clients
        feed.thread.join(10)
        assert not feed.thread.is_alive()
