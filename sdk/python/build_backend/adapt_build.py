"""A PEP 517 build backend for adapt_sdk in the standard library: a pure-Python wheel of
src/adapt and an sdist, so that installing needs no package index (not even setuptools).

The metadata is read from pyproject.toml (tomllib on Python >= 3.11, else the few keys this
file uses are parsed by hand)."""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile
from typing import Any, Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "adapt"


def _project() -> Dict[str, Any]:
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        raw = f.read()
    try:
        import tomllib
        project: Dict[str, Any] = tomllib.loads(raw.decode())["project"]
        return project
    except ImportError:
        text = raw.decode()
        section = text.split("[project]", 1)[1].split("\n[", 1)[0]
        out: Dict[str, Any] = {}
        for key in ("name", "version", "description", "requires-python"):
            m = re.search(r'^%s\s*=\s*"([^"]*)"' % re.escape(key), section, re.M)
            if m:
                out[key] = m.group(1)
        return out


def _metadata() -> Tuple[str, str, str]:
    p = _project()
    name, version = p["name"], p["version"]
    lines = ["Metadata-Version: 2.1", "Name: %s" % name, "Version: %s" % version,
             "Summary: %s" % p.get("description", ""),
             "Requires-Python: %s" % p.get("requires-python", ">=3.9"),
             "Classifier: Typing :: Typed"]
    readme = os.path.join(ROOT, "README.md")
    body = ""
    if os.path.exists(readme):
        lines.append("Description-Content-Type: text/markdown")
        with open(readme, encoding="utf-8") as f:
            body = "\n" + f.read()
    return name, version, "\n".join(lines) + "\n" + body


def _dist_info(name: str, version: str) -> str:
    return "%s-%s.dist-info" % (re.sub(r"[-_.]+", "_", name), version)


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (path, digest, len(data))


def _package_files() -> List[Tuple[str, str]]:
    src = os.path.join(ROOT, "src")
    found = []
    for dirpath, dirnames, filenames in os.walk(os.path.join(src, PACKAGE)):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for fn in sorted(filenames):
            if fn.endswith((".py", ".typed")):
                full = os.path.join(dirpath, fn)
                found.append((full, os.path.relpath(full, src).replace(os.sep, "/")))
    return found


def get_requires_for_build_wheel(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def prepare_metadata_for_build_wheel(metadata_directory: str,
                                     config_settings: Optional[Dict[str, Any]] = None) -> str:
    name, version, metadata = _metadata()
    info = _dist_info(name, version)
    os.makedirs(os.path.join(metadata_directory, info), exist_ok=True)
    with open(os.path.join(metadata_directory, info, "METADATA"), "w", encoding="utf-8") as f:
        f.write(metadata)
    return info


def build_wheel(wheel_directory: str, config_settings: Optional[Dict[str, Any]] = None,
                metadata_directory: Optional[str] = None) -> str:
    name, version, metadata = _metadata()
    dist = re.sub(r"[-_.]+", "_", name)
    info = _dist_info(name, version)
    filename = "%s-%s-py3-none-any.whl" % (dist, version)
    records = []
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w", zipfile.ZIP_DEFLATED) as whl:
        def add(arcname: str, data: bytes) -> None:
            whl.writestr(zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0)), data,
                         compress_type=zipfile.ZIP_DEFLATED)
            records.append(_record_line(arcname, data))

        for full, arcname in _package_files():
            with open(full, "rb") as f:
                add(arcname, f.read())
        add(info + "/METADATA", metadata.encode())
        add(info + "/WHEEL", b"Wheel-Version: 1.0\nGenerator: adapt_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        add(info + "/top_level.txt", (PACKAGE + "\n").encode())
        records.append(info + "/RECORD,,")
        whl.writestr(info + "/RECORD", "\n".join(records) + "\n")
    return filename


def build_sdist(sdist_directory: str, config_settings: Optional[Dict[str, Any]] = None) -> str:
    name, version, metadata = _metadata()
    base = "%s-%s" % (re.sub(r"[-_.]+", "_", name), version)
    filename = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz") as tar:
        paths = ["pyproject.toml", "README.md", "build_backend/adapt_build.py"]
        paths += [os.path.relpath(full, ROOT) for full, _ in _package_files()]
        for rel in paths:
            full = os.path.join(ROOT, rel)
            if os.path.exists(full):
                tar.add(full, arcname=base + "/" + rel.replace(os.sep, "/"))
        data = metadata.encode()
        ti = tarfile.TarInfo(base + "/PKG-INFO")
        ti.size = len(data)
        tar.addfile(ti, io.BytesIO(data))
    return filename
