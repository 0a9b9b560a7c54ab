"""`sandbox.files`: read, write, list and remove files inside a running sandbox, and tar
archives in and out. Uploads and downloads stream in 1 MiB chunks: no whole file in memory."""

from __future__ import annotations

import os
import tempfile
from typing import IO, TYPE_CHECKING, Iterable, Iterator, List, Optional, Union

from . import _model
from .errors import NotFound
from .models import FileEntry, FileList, FileWritten

if TYPE_CHECKING:
    from ._transport import Transport

Data = Union[bytes, str, IO[bytes], Iterable[bytes]]
LocalPath = Union[str, "os.PathLike[str]"]


class Files:
    def __init__(self, transport: "Transport", sandbox_id: str) -> None:
        self._t = transport
        self.sandbox_id = sandbox_id

    def _path(self, resource: str = "files") -> str:
        return "/v1/sandboxes/%s/%s" % (self.sandbox_id, resource)

    def write(self, path: str, data: Data, mode: Optional[str] = None) -> FileWritten:
        """Writes a file (replaced atomically). data: bytes, str (UTF-8), a binary file object
        or an iterable of byte chunks, streamed. mode: octal bits such as "0755"."""
        body = data.encode() if isinstance(data, str) else data
        raw = self._t.call("PUT", self._path(), query={"path": path, "mode": mode}, body=body,
                           headers={"Content-Type": "application/octet-stream"})
        return _model.from_json(FileWritten, raw)

    def read(self, path: str) -> bytes:
        """The whole file; for a large one, `stream` or `download`."""
        return self._t.request("GET", self._path(), query={"path": path},
                               headers={"Accept": "application/octet-stream"}).read()

    def read_text(self, path: str, encoding: str = "utf-8") -> str:
        return self.read(path).decode(encoding)

    def stream(self, path: str, chunk_size: int = 1 << 20) -> Iterator[bytes]:
        """The file's bytes as chunks, as they arrive."""
        resp = self._t.request("GET", self._path(), query={"path": path},
                               headers={"Accept": "application/octet-stream"})
        return resp.iter_bytes(chunk_size)

    def upload(self, local_path: LocalPath, path: str, mode: Optional[str] = None) -> FileWritten:
        """Streams a local file into the sandbox."""
        with open(local_path, "rb") as f:
            return self.write(path, f, mode=mode)

    def download(self, path: str, local_path: LocalPath) -> int:
        """Streams a file of the sandbox into a local file; answers the bytes written."""
        return _save(self.stream(path), local_path)

    def list(self, path: str = ".") -> List[FileEntry]:
        """A directory's entries (a file lists itself)."""
        raw = self._t.call("GET", self._path(), query={"path": path, "list": True})
        return _model.from_json(FileList, raw).items

    def stat(self, path: str) -> FileEntry:
        """The path's own entry (a symlink is not followed)."""
        return _model.from_json(FileEntry, self._t.call("GET", self._path(), query={"path": path, "stat": True}))

    def exists(self, path: str) -> bool:
        try:
            self.stat(path)
            return True
        except NotFound:
            return False

    def mkdir(self, path: str, parents: bool = False) -> None:
        self._t.call("POST", self._path("files/mkdir"), json_body={"path": path, "parents": parents})

    def remove(self, path: str, recursive: bool = False) -> None:
        self._t.request("DELETE", self._path(), query={"path": path, "recursive": recursive or None}).close()

    def download_archive(self, path: str, local_path: LocalPath) -> int:
        """A tar of a file, or of a directory's contents, streamed into a local file."""
        resp = self._t.request("GET", self._path("archive"), query={"path": path},
                               headers={"Accept": "application/x-tar"})
        return _save(resp.iter_bytes(), local_path)

    def upload_archive(self, tar: Union[LocalPath, IO[bytes]], path: str) -> FileWritten:
        """Extracts a tar (a local path or a binary file object) under directory `path`."""
        if isinstance(tar, (str, os.PathLike)):
            with open(tar, "rb") as f:
                return self.upload_archive(f, path)
        raw = self._t.call("PUT", self._path("archive"), query={"path": path}, body=tar,
                           headers={"Content-Type": "application/x-tar"})
        return _model.from_json(FileWritten, raw)


def _save(chunks: Iterator[bytes], local_path: LocalPath) -> int:
    """Writes chunks to local_path through a new temporary file renamed over it once complete.

    The temporary file is made exclusively (mkstemp), so a name that exists beside local_path
    (a symlink a sandbox's files brought, say) is never followed."""
    target = os.fspath(local_path)
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(target) + ".", suffix=".part",
                               dir=os.path.dirname(target) or ".")
    # mkstemp makes it 0600: a download gets what a new file gets (0666 less the umask).
    mask = os.umask(0)
    os.umask(mask)
    os.fchmod(fd, 0o666 & ~mask)
    n = 0
    try:
        with os.fdopen(fd, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
                n += len(chunk)
        os.replace(tmp, target)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)
    return n
