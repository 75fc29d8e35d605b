"""LinkBench's properties under LinkBench's own names, with the defaults of its
``config/FBWorkload.properties`` (the Facebook social-graph mix) and of the
``LinkConfig*.properties`` keys a run needs.

A LinkBench config runs as it is: :func:`read_config` reads a ``LinkConfig*.properties``
file and the ``workload_file`` it names (relative to the config, or to LinkBench's
home, the config folder's parent), the config's own values winning as in
``LinkBenchDriver``. Connection keys (``host``, ``user``, ``password``, ``port``,
``dbid``) are dropped: the target's URL says where to connect, and no password
reaches a run folder.

The defaults are the maintained client's (mdcallag/linkbench, 2017): its
``FBWorkload.properties`` mix, data sizes and payload generators, and its 2017
``Distribution.dat``. ``linkbench_defaults: 2012`` takes the archived 2012 release's
mix and data sizes and the 2011 distribution instead (keys a config sets still win).
``data_file`` is read when that file exists, else benchlib's copy of the file of that
name (``realdist.py``).

Every key of the maintained client's ``config/`` files is known. Keys LinkBench reads
that change nothing here (its store classes, log levels, statistics sampling, the
RocksDB/MongoDB stores' ``url``) are accepted and ignored; ``never_change`` is read
for linkbench.log's ``ID2Chooser run with neverChange=…`` line only (benchlib's id2s
are neverChange=false's; a ``true`` is said there, not followed);
``load_random_seed`` / ``request_random_seed`` seed the load's / the requests' streams;
``dbcount`` above 1 is refused in one line (one database: the target's); a key
LinkBench does not know is an error naming the nearest known one.
"""
from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..base import check_int_limits
from ..properties_file import read_property_file
from .payloads import check as check_datagen
from .realdist import DEFAULT_FILE, FILE_2011, nlinks_cdf

# the ten request percentages in LinkBench's order, with the operation each one drives
PERCENTAGES = {
    "addlink": "ADD_LINK", "deletelink": "DELETE_LINK", "updatelink": "UPDATE_LINK",
    "countlink": "COUNT_LINK", "getlink": "MULTIGET_LINK", "getlinklist": "GET_LINKS_LIST",
    "addnode": "ADD_NODE", "updatenode": "UPDATE_NODE", "deletenode": "DELETE_NODE",
    "getnode": "GET_NODE",
}
PERCENT_SUM_TOLERANCE = 1e-5  # LinkBenchRequest.initRequestProbabilities
NLINKS_FUNCS = ("real", "const", "reciprocal", "multiples", "perfect_squares", "perfect_powers",
                "exponential")   # LinkDistMode (perfect_powers: benchlib's old name)
ACCESS_FUNCS = ("ZipfDistribution", "UniformDistribution", "REAL", "ROUND_ROBIN", "RECIPROCAL",
                "MULTIPLE", "POWER", "PERFECT_POWER")
CONNECTION_KEYS = frozenset({"host", "user", "password", "port", "dbid", "url"})
# keys LinkBench reads that do not change what benchlib does
IGNORED_KEYS = frozenset({
    "linkstore", "nodestore", "debuglevel", "generate_nodes",
    "id2gen_config", "max_failed_requests",
    "maxsamples", "workload_file",
    "mysql_bulk_insert_batch", "mysql_disable_binlog_load", "nlinks_shape", "nlinks_mean",
    "read_config", "write_config", "read_uncorr_config", "write_uncorr_config",
    "node_read_config", "node_update_config", "node_delete_config",
    "node_read_shape_unused", "randomid2max",
}) | CONNECTION_KEYS
# the payload generators' keys, handed to payloads.py as ``datagen``
DATAGEN_KEYS = frozenset(f"{p}_datagen{s}" for p in ("link_add", "link_up", "node_add", "node_up")
                         for s in ("", "_startbyte", "_endbyte", "_uniqueness", "_motif_length"))
# the archived 2012 FBWorkload.properties (the original LinkBench release): its mix, its
# data sizes, and the 2011 distribution it was measured with (``linkbench_defaults: 2012``)
DEFAULTS_2012 = {
    "addlink": 8.9886601, "deletelink": 2.9907664, "updatelink": 8.0122125,
    "countlink": 4.8863567, "getlink": 0.5261142, "getlinklist": 50.7119145,
    "getnode": 12.9326683, "addnode": 2.5732789, "updatenode": 7.366437,
    "deletenode": 1.0115914, "link_datasize": 8, "node_datasize": 128, "data_file": FILE_2011,
}


def _pct(default: float) -> Any:
    return Field(default, ge=0.0, le=100.0)


def _shape(default: float) -> Any:
    return Field(default, gt=0.0, le=100.0)  # Zipf: Gray's (YCSB's) below 1, numpy's above


class LinkBenchProperties(BaseModel):
    """The LinkBench properties benchlib uses, LinkBench's names and FBWorkload defaults."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    startid1: int = Field(1, ge=1)
    maxid1: int = 10000001
    link_type_count: int = Field(2, ge=1, le=1000)
    nlinks_func: str = "real"
    nlinks_config: int = Field(1, ge=1)
    nlinks_default: int = Field(0, ge=0)
    link_datasize: float = Field(23.0, ge=0.0, le=255.0)
    node_datasize: float = Field(168.0, ge=0.0, le=65536.0)
    addlink: float = _pct(5.35038)
    deletelink: float = _pct(0.98401)
    updatelink: float = _pct(4.75589)
    countlink: float = _pct(4.27898)
    getlink: float = _pct(12.14725)
    getlinklist: float = _pct(22.57039)
    getnode: float = _pct(43.9869)
    addnode: float = _pct(2.61198)
    updatenode: float = _pct(3.06256)
    deletenode: float = _pct(0.25166)
    data_file: str = DEFAULT_FILE   # the out-degree distribution (nlinks_func = real)
    # benchlib's: 2012 = the archived 2012 FBWorkload.properties' mix and data sizes with
    # the 2011 distribution; 2017 = the maintained client's (the defaults above)
    linkbench_defaults: int = 2017
    getlinklist_history: float = _pct(0.3)
    range_limit: int = Field(10000, ge=1)
    read_function: str = "ZipfDistribution"
    read_shape: float = _shape(0.8)
    read_uncorr_blend: float = _pct(99.5)
    read_uncorr_function: str = "ZipfDistribution"
    read_uncorr_shape: float = _shape(0.8)
    write_function: str = "ZipfDistribution"
    write_shape: float = _shape(0.741)
    write_uncorr_blend: float = _pct(95.0)
    write_uncorr_function: str = "ZipfDistribution"
    write_uncorr_shape: float = _shape(0.741)
    node_read_function: str = "ZipfDistribution"
    node_read_shape: float = _shape(0.625)
    node_update_function: str = "ZipfDistribution"
    node_update_shape: float = _shape(0.606)
    node_delete_function: str = "UniformDistribution"
    node_delete_shape: float = _shape(0.5)
    link_multiget_dist: str = "GeometricDistribution"
    link_multiget_dist_min: int = Field(1, ge=1)
    link_multiget_dist_max: int = Field(128, ge=1, le=10000)
    link_multiget_dist_prob: float = Field(0.382, gt=0.0, le=1.0)
    loaders: int = Field(2, ge=1, le=256)
    # the load's id1 chunks (LinkBenchLoad's loader_chunk_size) and, load.mode java, the
    # rows of one INSERT (GraphStore's bulk_insert_count)
    loader_chunk_size: int = Field(2048, ge=1, le=1 << 24)
    bulk_insert_count: int = Field(1024, ge=1, le=8192)   # 7 bound values a link: under 65,535
    requesters: int | None = Field(None, ge=1, le=4096)  # default: run.threads
    requestrate: float = Field(0.0, ge=0.0)   # requests/s per requester; 0 = unthrottled
    requests: int | None = Field(None, ge=1)  # per requester; default: until maxtime
    maxtime: float = Field(3600.0, gt=0.0)    # seconds per request loop (run.loop_secs wins)
    linktable: str = Field("linktable", pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
    counttable: str = Field("counttable", pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
    nodetable: str = Field("nodetable", pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
    # benchlib's: MariaDB's linktable PARTITION BY KEY(id1) PARTITIONS n as the maintained
    # client's README creates it (0: not partitioned); other DBMSs ignore it
    link_partitions: int = Field(16, ge=0, le=1024)
    # the databases (LinkBench's dbid = dbprefix + 0 …): one here, the target's
    dbprefix: str = "linkdb"
    dbcount: int = Field(1, ge=1, le=100)
    dbload: str = ""
    # LinkBench's progress intervals: seconds (progressfreq, displayfreq), links loaded
    # (load_progress_interval), requests done (req_progress_interval): the progress lines
    # of linkbench.log and the terminal, the statistics (displayfreq) on the terminal (log.py)
    progressfreq: float = Field(300.0, gt=0.0)
    displayfreq: float = Field(1800.0, gt=0.0)
    load_progress_interval: int = Field(50000, ge=1)
    req_progress_interval: int = Field(10000, ge=1)
    warmup_time: float = Field(0.0, ge=0.0)   # seconds of each request loop not measured
    # the master seeds of the load's and the requests' streams (LinkBenchDriver's
    # createMasterRNG, a Java long); unset: the run's seed (meta.json), as linkbench.log says
    load_random_seed: int | None = Field(None, ge=-(1 << 63), lt=1 << 63)
    request_random_seed: int | None = Field(None, ge=-(1 << 63), lt=1 << 63)
    # ID2Chooser's: benchlib's id2s are neverChange=false's; true is read, said, not followed
    never_change: bool = False
    # the payload generators (``*_datagen*`` keys, see payloads.py), as read from the config
    datagen: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _normalize(cls, data: dict) -> dict:
        out = {}
        for k, v in data.items():
            if isinstance(v, str):
                v = v.strip()
                if k.endswith(("_function", "_dist")) or k == "nlinks_func":
                    v = v.rsplit(".", 1)[-1]  # com.facebook.LinkBench.distributions.X → X
                if k == "nlinks_func":
                    v = v.lower()
            out[k] = v
        return out

    @model_validator(mode="after")
    def _check(self) -> LinkBenchProperties:
        check_int_limits(self)
        if self.maxid1 <= self.startid1:
            raise ValueError(f"maxid1: must be > startid1 = {self.startid1}, got {self.maxid1}")
        total = sum(getattr(self, k) for k in PERCENTAGES)
        if abs(total - 100.0) > PERCENT_SUM_TOLERANCE:
            raise ValueError(f"addlink … getnode: the ten request percentages must sum to 100, "
                             f"got {total:.7g}")
        if self.nlinks_func not in NLINKS_FUNCS:
            raise ValueError(f"nlinks_func: one of {', '.join(NLINKS_FUNCS)}, got "
                             f"{self.nlinks_func!r}")
        for key in ("read_function", "read_uncorr_function", "write_function",
                    "write_uncorr_function", "node_read_function", "node_update_function",
                    "node_delete_function"):
            if getattr(self, key) not in ACCESS_FUNCS:
                raise ValueError(f"{key}: one of {', '.join(ACCESS_FUNCS)}, got "
                                 f"{getattr(self, key)!r}")
        if self.link_multiget_dist not in ("GeometricDistribution", "UniformDistribution", ""):
            raise ValueError("link_multiget_dist: GeometricDistribution, UniformDistribution or "
                             f"empty, got {self.link_multiget_dist!r}")
        for key in [k for k in type(self).model_fields if k.endswith("_shape")]:
            if getattr(self, key) == 1.0:
                raise ValueError(f"{key}: a Zipf shape other than 1 (0 < s < 1 or s > 1), got 1")
        self._check_dbs()
        check_datagen(self.datagen)
        if self.nlinks_func == "real":
            nlinks_cdf(self.data_file)   # ValueError: no such file, or not a distribution
        if self.link_multiget_dist_min > self.link_multiget_dist_max:
            raise ValueError(f"link_multiget_dist_min: exceeds link_multiget_dist_max = "
                             f"{self.link_multiget_dist_max}")
        return self

    def _check_dbs(self) -> None:
        if self.linkbench_defaults not in (2012, 2017):
            raise ValueError(f"linkbench_defaults: 2017 (the maintained client's) or 2012 "
                             f"(the archived release's), got {self.linkbench_defaults}")
        if self.dbcount > 1:
            raise ValueError(f"dbcount: benchlib runs LinkBench on one database, the target "
                             f"URL's (LinkBench's {self.dbprefix}0); {self.dbcount} databases "
                             f"({self.dbprefix}0 … {self.dbprefix}{self.dbcount - 1}) would need "
                             "one target each: set dbcount = 1")
        if self.dbload.strip() not in ("", "100"):
            raise ValueError(f"dbload: with one database, empty or 100, got {self.dbload!r}")

    @property
    def id_range(self) -> int:
        return self.maxid1 - self.startid1

    @property
    def mix(self) -> dict[str, float]:
        """Operation → its fraction of the requests."""
        return {op: getattr(self, k) / 100.0 for k, op in PERCENTAGES.items()}


KNOWN_KEYS = (frozenset(LinkBenchProperties.model_fields) | IGNORED_KEYS | DATAGEN_KEYS) - {"datagen"}


def from_properties(props: dict[str, Any]) -> LinkBenchProperties:
    """Validate LinkBench properties; ValueError with one line naming the key."""
    for k in props:
        if k not in KNOWN_KEYS:
            near = difflib.get_close_matches(str(k), sorted(KNOWN_KEYS), n=1, cutoff=0.6)
            hint = f" (did you mean {near[0]}?)" if near else ""
            raise ValueError(f"{k}: not a LinkBench property{hint}")
    if str(props.get("linkbench_defaults", "")).strip() == "2012":
        props = {**DEFAULTS_2012, **props}
    used = {k: v for k, v in props.items() if k not in IGNORED_KEYS | DATAGEN_KEYS
            and v is not None}
    used["datagen"] = {k: str(v).strip() for k, v in props.items()
                       if k in DATAGEN_KEYS and v is not None}
    try:
        return LinkBenchProperties.model_validate(used)
    except ValidationError as e:
        err = e.errors()[0]
        loc = ".".join(str(x) for x in err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        line = f"{loc}: {msg}, got {err['input']!r}" if loc else msg
        raise ValueError(line.replace("\n", " ")) from None


def read_config(path: str | Path) -> dict[str, str]:
    """A LinkBench config file and the ``workload_file`` it names, merged (the config's
    values win); connection keys dropped; a relative ``data_file`` found beside them made
    absolute. FileNotFoundError names the missing file."""
    path = Path(path)
    if not path.exists():   # a folder or a device: read_property_file names it
        raise FileNotFoundError(f"{path}: no such file")
    props = read_property_file(path)
    homes = [path.parent.parent, path.parent, Path.cwd()]   # LinkBench home: config/'s parent
    wl = props.get("workload_file")
    if wl:
        found = _find(wl, homes)
        if found is None:
            raise FileNotFoundError(f"{path}: workload_file {wl}: no such file")
        props = {**read_property_file(found), **props, "workload_file": str(found.resolve())}
        homes.insert(1, found.parent.parent)
    df = props.get("data_file")
    if df and (found := _find(df, homes)) is not None:
        props["data_file"] = str(found.resolve())
    return {k: v for k, v in props.items() if k not in CONNECTION_KEYS}


def _find(name: str, homes: list[Path]) -> Path | None:
    if Path(name).is_absolute():
        return Path(name) if Path(name).exists() else None
    return next((h / name for h in homes if (h / name).exists()), None)
