"""The tuning database: the best knob values found per kernel, in one JSON file.

    {"format": "relaylang-tuning", "version": 1,
     "host": {"cpu": "znver4", "features": "+avx512f,...", "vector_bytes": 64},
     "kernels": {"<knob key>": {"name": "fused_nn_dense_0", "ops": ["nn.dense"],
                                "knobs": {"schedule.tile_bytes": 128, ...},
                                "default_ms": 0.41, "tuned_ms": 0.33, "trials": 24}},
     "graphs": {"<model key>": {"name": "main",
                                "config": {"relay.AlterOpLayout.nchwc_max_block": 32},
                                "default_ms": 33.0, "tuned_ms": 31.9}}}

A model's graph knobs (layouts.py: the NCHWc channel block) are found by its model key
(the structural hash of its entry function) and become pass-context options of its build.
A kernel is found by its knob key (`knobs.kernel_key`: the structural hash of its
primitive function and which parameters are build-time constants), so one database serves
every model that has the same kernel. Knob values are only ever used within the choices
the lowering offers for the kernel at hand (`knobs.Chooser`): a stale record cannot make a
wrong kernel, only a default one.

Schedules measured on one CPU say little about another: a database written on a
different CPU (name or features) is ignored with a warning, as is one that cannot be read
(`load` never raises for a bad file: a build must not fail for want of tuning).
`save` writes a temporary file and renames it over the old one, so an interrupted tuner
leaves the last complete database.
"""
from __future__ import annotations

import json
import os
import tempfile
import warnings
from dataclasses import dataclass, field
from typing import Any

FORMAT = "relaylang-tuning"
VERSION = 1


class TuningDatabaseWarning(UserWarning):
    """A tuning database was ignored (unreadable, another format, another CPU)."""


@dataclass
class Record:
    name: str
    ops: list[str]
    knobs: dict[str, int]
    default_ms: float
    tuned_ms: float
    trials: int

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "ops": list(self.ops), "knobs": dict(sorted(self.knobs.items())),
                "default_ms": round(self.default_ms, 6), "tuned_ms": round(self.tuned_ms, 6),
                "trials": self.trials}

    @staticmethod
    def from_json(d: Any) -> Record:
        if not isinstance(d, dict) or not isinstance(d.get("knobs"), dict):
            raise ValueError("a kernel record needs a 'knobs' object")
        return Record(str(d.get("name", "")), [str(o) for o in d.get("ops", [])],
                      {str(k): int(v) for k, v in d["knobs"].items()},
                      float(d.get("default_ms", 0.0)), float(d.get("tuned_ms", 0.0)),
                      int(d.get("trials", 0)))


def host_identity() -> dict[str, Any]:
    """What a schedule's speed depends on: the CPU's name and features."""
    import llvmlite.binding as llvm

    from ..llvm.knobs import host
    return {"cpu": llvm.get_host_cpu_name(), "features": llvm.get_host_cpu_features().flatten(),
            "vector_bytes": host().vector_bytes}


# Graph knobs (layouts.py): pass-context option -> (default, choices).
def _graph_knobs() -> dict[str, tuple[int, tuple[int, ...]]]:
    from ...transform.layout.nchwc import MAX_BLOCK_CHOICES, MAX_BLOCK_CONFIG
    return {MAX_BLOCK_CONFIG: (MAX_BLOCK_CHOICES[0], MAX_BLOCK_CHOICES)}


GRAPH_KNOBS = _graph_knobs()


def model_key(mod: Any, entry: str = "main") -> str:
    """The key of a model's graph knobs: the structural hash of its entry function (the
    same in every process)."""
    from ...ir.equal import structural_hash
    from ...ir.expr import Function
    fn = mod if isinstance(mod, Function) else mod[entry]
    return f"{structural_hash(fn) & 0xFFFFFFFFFFFFFFFF:016x}"


@dataclass
class GraphRecord:
    """A model's graph knobs (layouts.py): pass-context options and what they measured."""
    name: str
    config: dict[str, int]
    default_ms: float
    tuned_ms: float

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "config": dict(sorted(self.config.items())),
                "default_ms": round(self.default_ms, 6), "tuned_ms": round(self.tuned_ms, 6)}

    @staticmethod
    def from_json(d: Any) -> GraphRecord:
        if not isinstance(d, dict) or not isinstance(d.get("config"), dict):
            raise ValueError("a graph record needs a 'config' object")
        return GraphRecord(str(d.get("name", "")),
                           {str(k): int(v) for k, v in d["config"].items()},
                           float(d.get("default_ms", 0.0)), float(d.get("tuned_ms", 0.0)))


@dataclass
class Database:
    host: dict[str, Any] = field(default_factory=host_identity)
    kernels: dict[str, Record] = field(default_factory=dict)
    graphs: dict[str, GraphRecord] = field(default_factory=dict)   # by layouts.model_key

    def to_json(self) -> dict[str, Any]:
        out = {"format": FORMAT, "version": VERSION, "host": self.host,
               "kernels": {k: r.to_json() for k, r in sorted(self.kernels.items())}}
        if self.graphs:
            out["graphs"] = {k: r.to_json() for k, r in sorted(self.graphs.items())}
        return out

    def graph_config(self, key: str) -> dict[str, int]:
        """The pass-context options recorded for the model `key` (layouts.model_key),
        only those a graph knob offers and within its choices."""
        record = self.graphs.get(key)
        if record is None:
            return {}
        return {name: value for name, value in record.config.items()
                if name in GRAPH_KNOBS and value in GRAPH_KNOBS[name][1]}

    def settings(self) -> Any:
        """The knob settings of this database's kernels (`knobs.using`)."""
        from ..llvm.knobs import Settings
        return Settings(per_kernel={k: dict(r.knobs) for k, r in self.kernels.items()})

    def save(self, path: str) -> None:
        text = json.dumps(self.to_json(), indent=1) + "\n"
        folder = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=".tuning-", suffix=".json", dir=folder)
        try:
            with os.fdopen(fd, "w") as f:
                f.write(text)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise


def parse(text: str) -> Database:
    """A database from its JSON text; ValueError says what is wrong."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"not JSON ({e.msg} at line {e.lineno}, column {e.colno})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"not a relaylang tuning database (no \"format\": \"{FORMAT}\")")
    if data.get("version") != VERSION:
        raise ValueError(f"version {data.get('version')!r}; this relaylang reads {VERSION}")
    kernels = data.get("kernels", {})
    host = data.get("host", {})
    graphs = data.get("graphs", {})
    if not isinstance(kernels, dict) or not isinstance(host, dict) \
            or not isinstance(graphs, dict):
        raise ValueError("'kernels', 'graphs' and 'host' must be objects")
    records = {}
    for key, rec in kernels.items():
        try:
            records[str(key)] = Record.from_json(rec)
        except (TypeError, ValueError) as e:
            raise ValueError(f"kernel {key}: {e}") from None
    graph_records = {}
    for key, rec in graphs.items():
        try:
            graph_records[str(key)] = GraphRecord.from_json(rec)
        except (TypeError, ValueError) as e:
            raise ValueError(f"graph {key}: {e}") from None
    return Database(host=dict(host), kernels=records, graphs=graph_records)


def foreign(db: Database) -> str:
    """Why `db` was written on another CPU ("" when it was written on this one)."""
    here = host_identity()
    for what in ("cpu", "features"):
        if db.host.get(what) != here[what]:
            theirs = str(db.host.get(what))
            if what == "features":
                return "it was written on a CPU with other features"
            return f"it was written on a {theirs} CPU, this is a {here[what]}"
    return ""


def load(path: str, *, for_writing: bool = False) -> Database | None:
    """The database at `path`, or None (with a `TuningDatabaseWarning`) when it is
    missing, unreadable, malformed or from another CPU. `for_writing` (the tuner's
    start): a missing file is a fresh database, silently."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        if for_writing:
            return Database()
        warnings.warn(f"tuning database {path}: no such file; building with the default "
                      "schedules", TuningDatabaseWarning, stacklevel=2)
        return None
    except OSError as e:
        warnings.warn(f"tuning database {path}: {e.strerror}; building with the default "
                      "schedules", TuningDatabaseWarning, stacklevel=2)
        return None
    try:
        db = parse(text)
    except ValueError as e:
        warnings.warn(f"tuning database {path} ignored: {e}", TuningDatabaseWarning,
                      stacklevel=2)
        return None
    why = foreign(db)
    if why:
        warnings.warn(f"tuning database {path} ignored: {why}", TuningDatabaseWarning,
                      stacklevel=2)
        return None
    return db
