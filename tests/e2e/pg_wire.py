"""A minimal PostgreSQL client in the standard library (protocol 3.0, SCRAM-SHA-256, the simple
query protocol), for the e2e tests: the default image has python3 but no psql. Run inside a
sandbox as `python3 -c SOURCE SQL...` it connects to DATABASE_URL (or the URL in argv[1] when it
starts with postgresql://), runs each SQL in turn and prints each row's columns joined by "|";
an error prints "ERROR: <message>" to stderr and exits 1.

`--key-file PATH` (first) writes the session's BackendKeyData ("PID SECRET") to PATH once it is
connected, before the SQL runs. `--cancel PID SECRET` sends a CancelRequest for that key to the
URL's host and port instead and prints how many bytes came back before the close."""

import base64
import hashlib
import hmac
import os
import socket
import struct
import sys
import urllib.parse


class PgError(Exception):
    pass


def _message(kind, payload):
    return kind + struct.pack("!I", len(payload) + 4) + payload


def _read(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise PgError("the server closed the connection")
        data += chunk
    return data


def _receive(sock):
    kind = _read(sock, 1)
    (length,) = struct.unpack("!I", _read(sock, 4))
    return kind, _read(sock, length - 4)


def _error_text(payload):
    fields = {}
    for part in payload.split(b"\0"):
        if part:
            fields[part[:1]] = part[1:].decode("utf-8", "replace")
    return fields.get(b"M", "unknown error")


# Each read's limit: a statement of the tests (8,000 rows of 1.3 KB) can take longer than 15 s
# on a loaded 2-core machine; 50 s stays under the 60 s the tests' commands wait.
def connect(url, timeout=50):
    return connect_with_key(url, timeout)[0]


def connect_with_key(url, timeout=50):
    """Returns the socket of a ready session and its BackendKeyData (pid, secret), or None."""
    u = urllib.parse.urlsplit(url)
    user = urllib.parse.unquote(u.username or "")
    password = urllib.parse.unquote(u.password or "")
    database = u.path.lstrip("/") or user
    sock = socket.create_connection((u.hostname, u.port or 5432), timeout=timeout)
    params = b"user\0" + user.encode() + b"\0database\0" + database.encode() + b"\0\0"
    body = struct.pack("!I", 196608) + params
    sock.sendall(struct.pack("!I", len(body) + 4) + body)
    client_nonce = base64.b64encode(os.urandom(18)).decode()
    first_bare = "n=,r=" + client_nonce
    salted = auth_message = key = None
    while True:
        kind, payload = _receive(sock)
        if kind == b"E":
            raise PgError(_error_text(payload))
        if kind == b"R":
            (code,) = struct.unpack("!I", payload[:4])
            if code == 0:
                continue
            if code == 10:  # SASL: the mechanisms
                first = ("n,," + first_bare).encode()
                sock.sendall(_message(b"p", b"SCRAM-SHA-256\0" + struct.pack("!I", len(first)) + first))
            elif code == 11:  # SASL continue: r=, s=, i=
                server_first = payload[4:].decode()
                attrs = dict(kv.split("=", 1) for kv in server_first.split(","))
                salted = hashlib.pbkdf2_hmac("sha256", password.encode(), base64.b64decode(attrs["s"]),
                                             int(attrs["i"]))
                client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
                stored_key = hashlib.sha256(client_key).digest()
                without_proof = "c=biws,r=" + attrs["r"]
                auth_message = ",".join([first_bare, server_first, without_proof]).encode()
                signature = hmac.new(stored_key, auth_message, hashlib.sha256).digest()
                proof = bytes(a ^ b for a, b in zip(client_key, signature))
                final = without_proof + ",p=" + base64.b64encode(proof).decode()
                sock.sendall(_message(b"p", final.encode()))
            elif code == 12:  # SASL final: the server's signature
                server_key = hmac.new(salted, b"Server Key", hashlib.sha256).digest()
                expected = hmac.new(server_key, auth_message, hashlib.sha256).digest()
                if payload[4:].decode() != "v=" + base64.b64encode(expected).decode():
                    raise PgError("the server's SCRAM signature is wrong")
            else:
                raise PgError("unsupported authentication request %d" % code)
        elif kind == b"K":
            key = struct.unpack("!II", payload)
        elif kind == b"Z":
            return sock, key


def cancel(url, pid, secret, timeout=15):
    """Sends a CancelRequest for (pid, secret) to the URL's host and port; returns what came
    back before the close (PostgreSQL answers nothing)."""
    u = urllib.parse.urlsplit(url)
    sock = socket.create_connection((u.hostname, u.port or 5432), timeout=timeout)
    sock.sendall(struct.pack("!IIII", 16, 80877102, pid, secret))
    answer = b""
    while True:
        try:
            chunk = sock.recv(4096)
        except ConnectionResetError:  # closed with the request unread: no answer either
            chunk = b""
        if not chunk:
            sock.close()
            return answer
        answer += chunk


def query(sock, sql):
    sock.sendall(_message(b"Q", sql.encode() + b"\0"))
    rows, error = [], None
    while True:
        kind, payload = _receive(sock)
        if kind == b"D":
            (n,) = struct.unpack("!H", payload[:2])
            at, row = 2, []
            for _ in range(n):
                (size,) = struct.unpack("!i", payload[at:at + 4])
                at += 4
                if size < 0:
                    row.append(None)
                else:
                    row.append(payload[at:at + size].decode())
                    at += size
            rows.append(row)
        elif kind == b"E":
            error = _error_text(payload)
        elif kind == b"Z":
            if error:
                raise PgError(error)
            return rows


def main(argv):
    url = os.environ.get("DATABASE_URL", "")
    if argv and argv[0].startswith("postgresql://"):
        url, argv = argv[0], argv[1:]
    key_file = None
    if argv[:1] == ["--key-file"]:
        key_file, argv = argv[1], argv[2:]
    try:
        if argv[:1] == ["--cancel"]:
            answer = cancel(url, int(argv[1]), int(argv[2]))
            print("closed after %d bytes" % len(answer))
            return 0
        sock, key = connect_with_key(url)
        if key_file:
            with open(key_file + ".tmp", "w") as f:
                f.write("%d %d\n" % key)
            os.rename(key_file + ".tmp", key_file)
        for sql in argv:
            for row in query(sock, sql):
                print("|".join("" if v is None else v for v in row))
    except (PgError, OSError) as e:
        print("ERROR: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
