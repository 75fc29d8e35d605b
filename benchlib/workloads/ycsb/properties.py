"""YCSB workload properties: the Java ``.properties`` syntax and CoreWorkload's keys.

:func:`~benchlib.workloads.properties_file.read_property_file` reads a YCSB workload
file (``workloada`` …) as ``java.util.Properties.load`` does; :class:`CoreWorkloadProperties` holds every
CoreWorkload property under YCSB's own name, with YCSB's default, validated.
Keys that are not CoreWorkload's (``threadcount``, ``db``, ``db.url``, …) are the
client's or a binding's: :func:`split_properties` sets them aside for the caller.

Deliberate differences from YCSB (which mostly accepts anything and fails later,
or silently): a proportion sum ≠ 1 is rejected instead of normalized; booleans
must be ``true``/``false`` (Java's ``Boolean.parseBoolean`` makes ``yes`` false);
``insertorder`` must be ``hashed`` or ``ordered`` (YCSB takes any non-``hashed``
word as ordered); trailing unescaped whitespace of a value is dropped (Java keeps
it, so ``readallfields=true␠`` is *false* in YCSB).
"""
from __future__ import annotations

import difflib
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from ..base import check_int_limits
from ..generators import INT_MAX  # Java Integer.MAX_VALUE: CoreWorkload's recordcount when it is 0
from ..properties_file import PropertyFileError, read_property_file  # noqa: F401 (re-exported)

PROPORTIONS = ("readproportion", "updateproportion", "insertproportion", "scanproportion",
               "readmodifywriteproportion")
PROPORTION_SUM_TOLERANCE = 1e-9


class WorkloadPropertyError(ValueError):
    """Invalid CoreWorkload properties; the message is one line naming the key(s)."""


# ---------------------------------------------------------------- CoreWorkload model

def _frac(default: float, **kw) -> Any:
    return Field(default, ge=0.0, le=1.0, **kw)


class CoreWorkloadProperties(BaseModel):
    """Every ``site.ycsb.workloads.CoreWorkload`` property, YCSB's names and defaults.

    Build it with :meth:`from_properties` from a mixed dict (property file values
    are strings, YAML values typed; both are coerced). Dotted names are aliases:
    ``exponential.percentile`` is the attribute ``exponential_percentile``.
    ``recordcount`` 0 (the default) becomes ``INT_MAX`` as in ``CoreWorkload.init``.
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True, allow_inf_nan=False)

    # names that reach SQL: plain identifiers (quoted by the targets as well)
    table: str = Field("usertable", pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
    recordcount: int = Field(0, ge=0)
    operationcount: int = Field(0, ge=0)            # 0: until maxexecutiontime
    maxexecutiontime: int = Field(0, ge=0)          # seconds; 0: no limit
    fieldcount: int = Field(10, ge=1)
    fieldlength: int = Field(100, ge=1)             # bytes (the maximum unless constant)
    fieldlengthdistribution: Literal["constant", "uniform", "zipfian", "histogram"] = "constant"
    minfieldlength: int = Field(1, ge=0)            # bytes; uniform/zipfian only
    fieldlengthhistogram: str = "hist.txt"
    fieldnameprefix: str = Field("field", pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,52}$")
    readallfields: bool = True
    readallfieldsbyname: bool = False
    writeallfields: bool = False
    dataintegrity: bool = False
    readproportion: float = _frac(0.95)
    updateproportion: float = _frac(0.05)
    insertproportion: float = _frac(0.0)
    scanproportion: float = _frac(0.0)
    readmodifywriteproportion: float = _frac(0.0)
    requestdistribution: Literal["uniform", "zipfian", "latest", "hotspot", "sequential",
                                 "exponential"] = "uniform"
    zipfianconstant: float = Field(0.99, gt=0.0, lt=1.0)  # Gray et al. need 0 < theta < 1
    hotspotdatafraction: float = _frac(0.2)
    hotspotopnfraction: float = _frac(0.8)
    exponential_percentile: float = Field(95.0, gt=0.0, lt=100.0, alias="exponential.percentile")
    exponential_frac: float = Field(0.8571428571, gt=0.0, le=1.0, alias="exponential.frac")
    insertorder: Literal["hashed", "ordered"] = "hashed"
    insertstart: int = Field(0, ge=0)
    insertcount: int | None = Field(None, ge=0)     # default: recordcount - insertstart
    zeropadding: int = Field(1, ge=0)
    minscanlength: int = Field(1, ge=1)
    maxscanlength: int = Field(1000, ge=1)
    scanlengthdistribution: Literal["uniform", "zipfian"] = "uniform"
    core_workload_insertion_retry_limit: int = Field(0, ge=0)
    core_workload_insertion_retry_interval: int = Field(3, ge=0)  # seconds
    core_workload_insertion_keep_going_on_error: bool = False

    @field_validator("*", mode="before")
    @classmethod
    def _coerce(cls, v: Any, info) -> Any:
        if isinstance(v, str):
            v = v.strip()
        name = info.field_name
        if cls.model_fields[name].annotation is bool:
            # Java's Boolean.parseBoolean: "true" in any case; we also refuse non-"false"
            if isinstance(v, str) and v.lower() in ("true", "false"):
                return v.lower() == "true"
            if not isinstance(v, bool):
                raise ValueError("expected true or false")
        elif cls.model_fields[name].annotation is str and isinstance(v, (int, float)):
            return str(v)
        return v

    @model_validator(mode="after")
    def _check(self) -> CoreWorkloadProperties:
        check_int_limits(self)
        if self.recordcount == 0:
            self.recordcount = INT_MAX  # as CoreWorkload.init: "recordcount = Integer.MAX_VALUE"
        if self.insertstart > self.recordcount:
            raise ValueError(f"insertstart = {self.insertstart} exceeds recordcount = "
                             f"{self.recordcount}")
        if self.insertcount is None:
            self.insertcount = self.recordcount - self.insertstart
        if self.insertstart + self.insertcount > self.recordcount:
            # CoreWorkload.init exits on exactly this ("recordcount must be bigger than
            # insertstart + insertcount")
            raise ValueError(f"insertstart + insertcount = {self.insertstart} + {self.insertcount}"
                             f" = {self.insertstart + self.insertcount} exceeds recordcount = "
                             f"{self.recordcount}")
        values = [getattr(self, p) for p in PROPORTIONS]
        total = sum(values)
        if abs(total - 1.0) > PROPORTION_SUM_TOLERANCE:
            terms = " + ".join(f"{p}={v:g}" + ("" if p in self.model_fields_set else " (default)")
                               for p, v in zip(PROPORTIONS, values))
            raise ValueError(f"proportions must sum to 1: {terms} = {total:.12g}")
        variable_length = self.fieldlengthdistribution in ("uniform", "zipfian")
        if variable_length and self.minfieldlength > self.fieldlength:
            raise ValueError(f"minfieldlength = {self.minfieldlength} exceeds fieldlength = "
                             f"{self.fieldlength}")
        if self.minscanlength > self.maxscanlength:
            raise ValueError(f"minscanlength = {self.minscanlength} exceeds maxscanlength = "
                             f"{self.maxscanlength}")
        if self.dataintegrity and self.fieldlengthdistribution != "constant":
            raise ValueError("dataintegrity=true requires fieldlengthdistribution=constant, got "
                             f"{self.fieldlengthdistribution}")
        return self

    @classmethod
    def from_properties(cls, d: dict[str, Any]) -> CoreWorkloadProperties:
        """Validate the CoreWorkload keys of ``d``, ignoring all other keys.

        A value of None counts as absent (the default applies).

        Raises
        ------
        WorkloadPropertyError
            One line, naming the offending key(s) and the value given.
        """
        core, _ = split_properties(d)
        try:
            return cls.model_validate({k: v for k, v in core.items() if v is not None})
        except ValidationError as e:
            raise WorkloadPropertyError(_one_line(e)) from None

    @property
    def field_names(self) -> list[str]:
        """``fieldnameprefix`` + 0 … fieldcount-1, as CoreWorkload.init builds them."""
        return [f"{self.fieldnameprefix}{i}" for i in range(self.fieldcount)]

    @property
    def proportions(self) -> dict[str, float]:
        """The operation mix in YCSB's order: READ, UPDATE, INSERT, SCAN, READMODIFYWRITE."""
        return {p: getattr(self, p) for p in PROPORTIONS}


def _one_line(e: ValidationError) -> str:
    parts = []
    for err in e.errors():
        msg = err["msg"].removeprefix("Value error, ")
        loc = ".".join(str(x) for x in err["loc"])
        if loc:
            parts.append(f"{loc}: {msg}, got {err['input']!r}")
        else:
            parts.append(msg)
    return "; ".join(parts).replace("\n", " ")


CORE_KEYS: frozenset[str] = frozenset(
    f.alias or name for name, f in CoreWorkloadProperties.model_fields.items())

# Keys YCSB's Client, measurements and bundled bindings read: known, so not "misspelled".
CLIENT_KEYS = frozenset({
    "workload", "db", "exporter", "exportfile", "threadcount", "target", "dotransactions",
    "status", "label", "spin.sleep", "measurementtype", "reportlatencyforeacherror",
    "latencytrackederrors", "threads",
})
BINDING_PREFIXES = ("db.", "jdbc.", "basicdb.", "measurement.", "hdrhistogram.", "histogram.",
                    "timeseries.", "status.")


def split_properties(d: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split a property dict into CoreWorkload keys and everything else.

    Returns
    -------
    (core, other) : tuple of dict
        ``core``: the keys :class:`CoreWorkloadProperties` knows (YCSB spelling,
        e.g. ``exponential.percentile``); ``other``: client-level and binding keys
        (``threadcount``, ``target``, ``db``, ``db.url``, ``jdbc.*``, …) and unknown
        ones, for the caller to use or to report (see :func:`likely_misspellings`).
    """
    core, other = {}, {}
    for k, v in d.items():
        (core if str(k) in CORE_KEYS else other)[str(k)] = v
    return core, other


def likely_misspellings(other: dict[str, Any]) -> dict[str, str]:
    """Non-core keys that look like a misspelled CoreWorkload key: {given: meant}.

    YCSB silently ignores ``requestdistrbution=zipfian`` and runs uniform; a caller
    can warn with this instead.
    """
    out = {}
    for k in other:
        if k in CLIENT_KEYS or k.startswith(BINDING_PREFIXES):
            continue
        match = difflib.get_close_matches(k, CORE_KEYS, n=1, cutoff=0.85)
        if match:
            out[k] = match[0]
    return out
