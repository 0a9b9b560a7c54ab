"""Commands inside a running sandbox: run and wait, or start, stream, wait and kill."""

from __future__ import annotations

import json
import socket
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional, Sequence, Union

from . import _model
from ._sse import parse_events
from .pages import paginate
from .errors import AdaptError, CommandFailed, RequestTimeout
from .models import CommandResult

if TYPE_CHECKING:
    from ._transport import Transport

OutputCallback = Callable[[str], None]
CommandLine = Union[str, Sequence[str]]

# What a python run's stderr says when the image has no python3 (adaptd's words); the shell
# below says the same for run_python with cwd, env or user, which POST .../python lacks.
PYTHON_MISSING = "adapt: python3 is not installed in this image"
_PYTHON_SCRIPT = ("command -v python3 >/dev/null 2>&1 || { echo '%s' >&2; exit 127; }; "
                  "exec python3 -" % PYTHON_MISSING)
_STREAM_SLACK = 60.0


class CommandHandle:
    """A command that was started; `wait()` follows its output until it ends."""

    def __init__(self, transport: "Transport", sandbox_id: str, result: CommandResult) -> None:
        self._t = transport
        self.sandbox_id = sandbox_id
        self.id = result.id
        self.result = result

    def _path(self, suffix: str = "") -> str:
        return "/v1/sandboxes/%s/commands/%s%s" % (self.sandbox_id, self.id, suffix)

    def refresh(self) -> CommandResult:
        self.result = _model.from_json(CommandResult, self._t.call("GET", self._path()))
        return self.result

    def kill(self) -> CommandResult:
        """Kills the command's process tree; answers it once ended (`status` "killed")."""
        self.result = _model.from_json(CommandResult, self._t.call("DELETE", self._path()))
        return self.result

    def wait(self, on_stdout: Optional[OutputCallback] = None,
             on_stderr: Optional[OutputCallback] = None,
             timeout: Optional[float] = None) -> CommandResult:
        """Streams the output (SSE) to the callbacks as it comes and answers the ended command.
        With no callbacks and an ended command, answers at once. timeout (seconds) bounds the
        wait: RequestTimeout when it runs out (the command keeps running)."""
        if self.result.done and on_stdout is None and on_stderr is None:
            return self.result
        limit = timeout if timeout is not None else float(self.result.timeout_seconds or 600) + _STREAM_SLACK
        deadline = time.monotonic() + limit
        seen = {"stdout": 0, "stderr": 0}
        callbacks = {"stdout": on_stdout, "stderr": on_stderr}
        try:
            with self._t.request("GET", self._path("/stream"), headers={"Accept": "text/event-stream"},
                                 timeout=limit) as resp:
                for ev in parse_events(resp.readline):
                    if ev.event in callbacks:
                        text = _model_text(ev.data)
                        seen[ev.event] += len(text)
                        cb = callbacks[ev.event]
                        if cb is not None and text:
                            cb(text)
                    elif ev.event == "result":
                        self.result = _model.from_json(CommandResult, _json(ev.data))
                        return self.result
        except socket.timeout as e:
            raise RequestTimeout("command %s still running after %s s" % (self.id, limit),
                                 code="request_timeout") from e
        except AdaptError:
            raise
        except OSError:
            pass  # the stream broke: poll below, delivering only output not yet delivered
        while True:
            result = self.refresh()
            for name, cb in callbacks.items():
                text = getattr(result, name)
                if cb is not None and len(text) > seen[name]:
                    cb(text[seen[name]:])
                    seen[name] = len(text)
            if result.done:
                return result
            if time.monotonic() > deadline:
                raise RequestTimeout("command %s still running after %s s" % (self.id, limit),
                                     code="request_timeout")
            time.sleep(0.5)


def _json(data: str) -> Dict[str, Any]:
    value = json.loads(data)
    if not isinstance(value, dict):
        raise AdaptError("unexpected stream frame %r" % data[:200])
    return value


def _model_text(data: str) -> str:
    return str(_json(data).get("data", ""))


def _check(what: str, result: CommandResult) -> None:
    """run()'s check=True: CommandFailed on a non-zero exit."""
    if result.exit_code != 0:
        raise CommandFailed("%s exited with %s: %s" % (
            what, result.exit_code if result.exit_code is not None else result.status,
            (result.stderr or result.error or "").strip()[-500:]), code="command_failed")


class Commands:
    """`sandbox.commands`: processes run beside the sandbox's workload."""

    def __init__(self, transport: "Transport", sandbox_id: str) -> None:
        self._t = transport
        self.sandbox_id = sandbox_id

    def start(self, cmd: CommandLine, *, cwd: Optional[str] = None, env: Optional[Dict[str, str]] = None,
              stdin: Optional[str] = None, timeout: Optional[int] = None, user: Optional[str] = None,
              wait_seconds: int = 0) -> CommandHandle:
        """Starts a command (a string runs under `/bin/sh -c`, a list is argv with no shell)
        and answers its handle without waiting (unless wait_seconds, at most 60)."""
        body: Dict[str, Any] = {"waitSeconds": wait_seconds}
        if isinstance(cmd, str):
            body["command"] = cmd
        else:
            body["argv"] = list(cmd)
        for key, value in (("cwd", cwd), ("env", env), ("stdin", stdin), ("timeoutSeconds", timeout),
                           ("user", user)):
            if value is not None:
                body[key] = value
        # adaptd holds the answer up to wait_seconds: the request may take that much longer.
        data = self._t.call("POST", "/v1/sandboxes/%s/commands" % self.sandbox_id, json_body=body,
                            timeout=self._t.timeout + wait_seconds)
        return CommandHandle(self._t, self.sandbox_id, _model.from_json(CommandResult, data))

    def run(self, cmd: CommandLine, *, cwd: Optional[str] = None, env: Optional[Dict[str, str]] = None,
            stdin: Optional[str] = None, timeout: Optional[int] = None, user: Optional[str] = None,
            on_stdout: Optional[OutputCallback] = None, on_stderr: Optional[OutputCallback] = None,
            check: bool = False) -> CommandResult:
        """Runs a command to its end and answers the result; output streams to on_stdout and
        on_stderr as it comes. check=True raises CommandFailed on a non-zero exit."""
        streaming = on_stdout is not None or on_stderr is not None
        handle = self.start(cmd, cwd=cwd, env=env, stdin=stdin, timeout=timeout, user=user,
                            wait_seconds=0 if streaming else 60)
        result = handle.wait(on_stdout, on_stderr)
        if check:
            _check(cmd if isinstance(cmd, str) else " ".join(cmd), result)
        return result

    def run_python(self, code: str, *, cwd: Optional[str] = None, env: Optional[Dict[str, str]] = None,
                   timeout: Optional[int] = None, user: Optional[str] = None,
                   on_stdout: Optional[OutputCallback] = None, on_stderr: Optional[OutputCallback] = None,
                   check: bool = False) -> CommandResult:
        """Runs Python code with the image's python3 (the program on its standard input) to its
        end, as run() does: POST .../python, the verb of MCP's run_python and `adapt sandbox
        python`. An image without python3 raises Unsupported; when output streams (callbacks),
        the answer comes before the end, so the result says it instead: exit code 127 and
        PYTHON_MISSING on stderr. cwd, env or user: run as a command, which has them."""
        if cwd is not None or env is not None or user is not None:
            return self.run(["/bin/sh", "-c", _PYTHON_SCRIPT], stdin=code, cwd=cwd, env=env, timeout=timeout,
                            user=user, on_stdout=on_stdout, on_stderr=on_stderr, check=check)
        wait_seconds = 0 if on_stdout is not None or on_stderr is not None else 60
        body: Dict[str, Any] = {"code": code, "waitSeconds": wait_seconds}
        if timeout is not None:
            body["timeoutSeconds"] = timeout
        data = self._t.call("POST", "/v1/sandboxes/%s/python" % self.sandbox_id, json_body=body,
                            timeout=self._t.timeout + wait_seconds)
        handle = CommandHandle(self._t, self.sandbox_id, _model.from_json(CommandResult, data))
        result = handle.wait(on_stdout, on_stderr)
        if check:
            _check("python", result)
        return result

    def get(self, command_id: str) -> CommandHandle:
        data = self._t.call("GET", "/v1/sandboxes/%s/commands/%s" % (self.sandbox_id, command_id))
        return CommandHandle(self._t, self.sandbox_id, _model.from_json(CommandResult, data))

    def list(self, page_size: int = 50) -> Iterator[CommandResult]:
        """Every command of the sandbox, newest first, following nextCursor."""
        return paginate(self._t, "/v1/sandboxes/%s/commands" % self.sandbox_id, CommandResult, page_size)


__all__: List[str] = ["Commands", "CommandHandle", "PYTHON_MISSING"]
