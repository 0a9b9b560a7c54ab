"""adapt: the Python SDK for adapt's sandbox API (standard library only).

    import adapt
    with adapt.Sandbox.create(image="python:3.12-slim") as sb:
        print(sb.commands.run("echo hello").stdout)
"""

from .apps import Apps
from .automations import Automations
from .client import Client
from .commands import CommandHandle, Commands
from .errors import (AdaptError, CommandFailed, Conflict, EventsReset, InternalError, InvalidArgument,
                     MethodNotAllowed, NotFound, PayloadTooLarge, PaymentRequired, PermissionDenied,
                     RateLimited, RequestTimeout, SandboxFailed, Unauthenticated, Unavailable, Unsupported)
from .files import Files
from .models import (Account, AccountAlert, AlertEvent, Automation, AutomationStateChange, AccountUsage, ApiKey, Artifact, ArtifactList, Checkpoint, CommandResult, Database, DatabaseDump, Endpoint,
                     FileEntry, FileList, FileWritten, Image, Job, App, AppRelease, AppReplica, AppReplicaLog, LedgerEntry, Network, NewApiKey,
                     NewStorageToken, NewUser, ObjectLink, ObjectStorageAttachment, Operation, Org,
                     Plan, PlanLimits, PlanPrices, Run, RunEvent, RunUsage, SandboxInfo, Secret, Site, Startup,
                     StatusEvent, Storage, StorageToken, StoredObject, UsageReport, UsageTotal,
                     User)
from .sandbox import Sandbox, Sandboxes

__version__ = "0.1.0"

__all__ = [
    "Client", "Sandbox", "Sandboxes", "Commands", "CommandHandle", "Files",
    "AdaptError", "CommandFailed", "Conflict", "EventsReset", "InternalError", "InvalidArgument",
    "MethodNotAllowed", "NotFound", "PayloadTooLarge", "PermissionDenied", "RateLimited",
    "RequestTimeout", "SandboxFailed", "Unauthenticated", "Unavailable", "Unsupported",
    "ApiKey", "NewApiKey", "Org", "CommandResult", "Endpoint", "FileEntry", "FileList", "FileWritten", "Image", "Network",
    "Operation", "SandboxInfo", "Secret", "Site", "Startup", "StatusEvent", "Storage",
    "StoredObject", "NewStorageToken", "ObjectLink", "ObjectStorageAttachment", "StorageToken",
    "Artifact", "ArtifactList", "Checkpoint", "User", "NewUser", "Account", "AccountUsage", "LedgerEntry", "Plan",
    "PlanLimits", "PlanPrices", "PaymentRequired", "AccountAlert", "UsageReport", "UsageTotal",
    "Job", "Run", "RunEvent", "RunUsage", "AlertEvent", "App", "AppRelease", "AppReplica", "AppReplicaLog", "Apps", "Automation", "AutomationStateChange", "Automations", "Database", "DatabaseDump",
]
