"""``export_traces``: the OpenTelemetry spans of every run (``invoke_agent``,
``chat``, ``execute_tool``, GenAI semantic conventions: docs/observability.md)
sent to an OTLP collector over HTTP, by the Rust core itself
(``parlance_otel``), in batches from a thread of its own."""

from __future__ import annotations

import atexit
from typing import Literal, Mapping, Optional

from . import _core


class Traces:
    """The running export: ``flush()`` sends the spans ended so far (and
    waits for the collector); ``shutdown()`` sends what is left and stops.
    Python's exit flushes it too."""

    def __init__(self, core: _core.Traces) -> None:
        self._core = core

    def flush(self) -> None:
        """Sends the spans ended so far and waits for the collector."""
        self._core.flush()

    def shutdown(self) -> None:
        """Sends what is left and stops exporting."""
        self._core.shutdown()


def export_traces(
    endpoint: Optional[str] = None,
    *,
    headers: Optional[Mapping[str, str]] = None,
    service_name: Optional[str] = None,
    protocol: Optional[Literal["http/protobuf", "http/json"]] = None,
) -> Traces:
    """Exports every run's spans from now on, once per process.

    ``endpoint`` is the collector's base URL (``http://localhost:4318``;
    spans go to its ``/v1/traces``); what is not given comes from the
    standard variables (``OTEL_EXPORTER_OTLP_ENDPOINT``,
    ``OTEL_EXPORTER_OTLP_HEADERS``, ``OTEL_SERVICE_NAME``, default
    ``parlance``, ``OTEL_EXPORTER_OTLP_PROTOCOL``, default
    ``http/protobuf``). Message content is recorded only with
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``. A setting
    that cannot work, no endpoint at all, or a second call raise
    ``ConfigError``. The runtime's logs keep going to ``logging``."""
    core = _core.export_traces(
        {
            "endpoint": endpoint,
            "headers": dict(headers) if headers is not None else None,
            "service_name": service_name,
            "protocol": protocol,
        }
    )
    traces = Traces(core)
    atexit.register(_quietly, core)
    return traces


def _quietly(core: _core.Traces) -> None:
    try:
        core.shutdown()
    except Exception:  # the process is ending: nothing is left to tell
        pass
