"""Typed models from the API's JSON: dataclasses whose fields are the wire names in snake_case.

`from_json` fills a dataclass from a JSON object by its type hints (nested models, lists and
maps of them, Optional). Fields the server adds later are kept in `extra` rather than lost;
tests/e2e/test_sdk_models.py keeps the fields and types equal to docs/openapi.yaml.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Dict, List, Type, TypeVar, Union, get_args, get_origin, get_type_hints

T = TypeVar("T")

_OVERRIDES: Dict[str, str] = {"memory_mib": "memoryMiB", "disk_mib": "diskMiB",
                              "size_mib": "sizeMiB", "database_mib": "databaseMiB",
                              "persistent_storage_gib": "persistentStorageGiB",
                              "object_storage_gib": "objectStorageGiB",
                              "persistent_storage_mib": "persistentStorageMiB",
                              "memory_gib_second_nanos": "memoryGiBSecondNanos",
                              "storage_gib_month_nanos": "storageGiBMonthNanos",
                              "memory_mib_milliseconds": "memoryMiBMilliseconds",
                              "storage_mib_milliseconds": "storageMiBMilliseconds"}


def wire_name(field_name: str) -> str:
    """snake_case field -> the API's camelCase (`memory_mib` -> `memoryMiB`, `default_` -> `default`)."""
    if field_name in _OVERRIDES:
        return _OVERRIDES[field_name]
    name = field_name.rstrip("_")
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def snake_name(wire: str) -> str:
    for k, v in _OVERRIDES.items():
        if v == wire:
            return k
    s = re.sub(r"(?<!^)(?=[A-Z])", "_", wire).lower()
    return s + "_" if s in ("default", "from", "import", "global") else s


def _convert(tp: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = get_origin(tp)
    if origin is Union:
        args = [a for a in get_args(tp) if a is not type(None)]
        return _convert(args[0], value) if len(args) == 1 else value
    if origin in (list, List):
        inner = (get_args(tp) or (Any,))[0]
        return [_convert(inner, v) for v in value] if isinstance(value, list) else value
    if origin in (dict, Dict):
        kv = get_args(tp)
        inner = kv[1] if len(kv) == 2 else Any
        return {k: _convert(inner, v) for k, v in value.items()} if isinstance(value, dict) else value
    if dataclasses.is_dataclass(tp) and isinstance(value, dict):
        return from_json(tp, value)
    return value


def from_json(cls: Type[T], data: Dict[str, Any]) -> T:
    hints = get_type_hints(cls)
    kwargs: Dict[str, Any] = {}
    known = set()
    for f in dataclasses.fields(cls):
        if f.name == "extra":
            continue
        wire = wire_name(f.name)
        known.add(wire)
        if wire in data:
            kwargs[f.name] = _convert(hints[f.name], data[wire])
    if "extra" in {f.name for f in dataclasses.fields(cls)}:
        kwargs["extra"] = {k: v for k, v in data.items() if k not in known}
    return cls(**kwargs)


def to_json(obj: Any) -> Any:
    """A model (or a list/dict of them) back to the API's JSON, without None fields."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out: Dict[str, Any] = {}
        for f in dataclasses.fields(obj):
            v = getattr(obj, f.name)
            if f.name == "extra":
                out.update(v or {})
            elif v is not None:
                out[wire_name(f.name)] = to_json(v)
        return out
    if isinstance(obj, list):
        return [to_json(v) for v in obj]
    if isinstance(obj, dict):
        return {k: to_json(v) for k, v in obj.items()}
    return obj
