"""autoport-client: a Python client of autoport (and, where the paths match, the
original service). See the README of clients/python."""

from autoport_client._core import RetryPolicy, __version__, pkce_pair
from autoport_client.aio import AsyncClient, AsyncVehicleSession
from autoport_client.client import Client, VehicleSession
from autoport_client.errors import (
    ApiError,
    AuthenticationError,
    AutoportError,
    BadRequest,
    Conflict,
    ConsentError,
    InvalidGrant,
    NotFound,
    OAuthError,
    PermissionDenied,
    PrivacyMode,
    RateLimited,
    ServerError,
    SignatureError,
    StreamDisconnected,
    ValidationError,
    VehicleOffline,
)
from autoport_client.models import VehicleData
from autoport_client.types import (
    Eligibility,
    FleetVehicle,
    HistoryPoint,
    NewFleetVehicle,
    StreamGap,
    StreamMessage,
    VehicleInfo,
    VehicleToken,
)

__all__ = [
    "ApiError",
    "AsyncClient",
    "AsyncVehicleSession",
    "AuthenticationError",
    "AutoportError",
    "BadRequest",
    "Client",
    "Conflict",
    "ConsentError",
    "Eligibility",
    "FleetVehicle",
    "HistoryPoint",
    "InvalidGrant",
    "NewFleetVehicle",
    "NotFound",
    "OAuthError",
    "PermissionDenied",
    "PrivacyMode",
    "RateLimited",
    "RetryPolicy",
    "ServerError",
    "SignatureError",
    "StreamDisconnected",
    "StreamGap",
    "StreamMessage",
    "ValidationError",
    "VehicleData",
    "VehicleInfo",
    "VehicleOffline",
    "VehicleSession",
    "VehicleToken",
    "__version__",
    "pkce_pair",
]
