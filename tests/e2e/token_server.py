"""A small OAuth2-style token server for docker-registry's `token` auth (the bearer flow):
basic credentials in, a JWT signed with a throwaway EC key (its self-signed certificate in the
x5c header and in the registry's rootcertbundle) out."""

import base64
import datetime
import http.server
import json
import os
import threading
import time
import urllib.parse
import uuid

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.x509.oid import NameOID

import harness

SERVICE = "adapt-test-registry"
ISSUER = "adapt-test-issuer"


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class TokenServer:
    def __init__(self, base_dir, username, password):
        self.username, self.password = username, password
        self.requests = []
        self.key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "adapt test token issuer")])
        now = datetime.datetime.utcnow()
        self.cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
                     .public_key(self.key.public_key()).serial_number(x509.random_serial_number())
                     .not_valid_before(now - datetime.timedelta(days=1))
                     .not_valid_after(now + datetime.timedelta(days=1))
                     .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                     .sign(self.key, hashes.SHA256()))
        self.cert_path = os.path.join(base_dir, "token-cert.pem")
        with open(self.cert_path, "wb") as f:
            f.write(self.cert.public_bytes(serialization.Encoding.PEM))
        self.port = harness.free_port()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                url = urllib.parse.urlparse(self.path)
                query = urllib.parse.parse_qs(url.query)
                auth = self.headers.get("Authorization", "")
                server.requests.append({"path": url.path, "query": query, "auth": auth})
                expected = "Basic " + base64.b64encode(("%s:%s" % (username, password)).encode()).decode()
                if auth != expected:
                    self.send_response(401)
                    self.end_headers()
                    return
                body = json.dumps({"token": server.token(query.get("scope", []))}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def realm(self):
        return "http://127.0.0.1:%d/token" % self.port

    def registry_config(self):
        return ("auth:\n  token:\n    realm: %s\n    service: %s\n    issuer: %s\n"
                "    rootcertbundle: %s\n" % (self.realm, SERVICE, ISSUER, self.cert_path))

    def token(self, scopes):
        access = []
        for scope in scopes:
            for one in scope.split(" "):
                kind, name, actions = one.split(":")
                access.append({"type": kind, "name": name, "actions": actions.split(",")})
        now = int(time.time())
        header = {"typ": "JWT", "alg": "ES256",
                  "x5c": [base64.b64encode(self.cert.public_bytes(serialization.Encoding.DER)).decode()]}
        claims = {"iss": ISSUER, "sub": self.username, "aud": SERVICE, "exp": now + 300,
                  "nbf": now - 10, "iat": now, "jti": uuid.uuid4().hex, "access": access}
        signing_input = b64(json.dumps(header).encode()) + "." + b64(json.dumps(claims).encode())
        der = self.key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256()))
        r, s = decode_dss_signature(der)
        return signing_input + "." + b64(r.to_bytes(32, "big") + s.to_bytes(32, "big"))

    def close(self):
        self.httpd.shutdown()
