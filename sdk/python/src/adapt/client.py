"""The client: one adaptd URL and API key, and the organization's resources under it."""

from __future__ import annotations

from typing import Any, Dict, Optional

from ._transport import Transport
from .automations import Automations
from .apps import Apps
from .resources import (Accounts, Databases, Images, Jobs, Keys, Objects, Orgs, Plans, Runs, Secrets, Sites,
                        StorageVolumes)
from .sandbox import Sandboxes


class Client:
    """`Client()` reads ADAPT_URL and ADAPT_API_KEY; arguments override them. timeout: seconds
    for each HTTP request (waits have their own); max_retries: for transient failures."""

    def __init__(self, url: Optional[str] = None, api_key: Optional[str] = None,
                 timeout: float = 60.0, max_retries: int = 4) -> None:
        self.transport = Transport(url, api_key, timeout=timeout, max_retries=max_retries)
        self.sandboxes = Sandboxes(self)
        self.images = Images(self.transport)
        self.secrets = Secrets(self.transport)
        self.database = Databases(self.transport)
        self.jobs = Jobs(self.transport)
        self.apps = Apps(self.transport)
        self.runs = Runs(self.transport)
        self.automations = Automations(self.transport)
        self.storage = StorageVolumes(self.transport)
        self.objects = Objects(self.transport)
        self.sites = Sites(self.transport)
        self.orgs = Orgs(self.transport)
        self.keys = Keys(self.transport)
        self.account = Accounts(self.transport)
        self.plans = Plans(self.transport)

    @property
    def url(self) -> str:
        return self.transport.url

    def health(self) -> bool:
        """True when adaptd answers /healthz with status ok (no key needed)."""
        data = self.transport.call("GET", "/healthz")
        return isinstance(data, dict) and data.get("status") == "ok"

    def metrics(self) -> str:
        """Prometheus text metrics: balances, usage, limits and sandboxes (admin key)."""
        return self.transport.request("GET", "/metrics", headers={"Accept": "text/plain"}).read().decode()

    def gpu_types(self) -> Dict[str, Any]:
        """The GPU types new GPU sandboxes can have ({"items", "nextCursor", "explanation"});
        empty on a host without GPU passthrough, with the reason."""
        result: Dict[str, Any] = self.transport.call("GET", "/v1/gpu-types")
        return result

    def environments(self) -> Dict[str, Any]:
        """The environment aliases and image sources this adaptd accepts."""
        result: Dict[str, Any] = self.transport.call("GET", "/v1/environments")
        return result
