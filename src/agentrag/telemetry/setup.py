"""A `TracerProvider` as the standard OTEL_* variables describe it (imported only when telemetry is on).

`OTEL_TRACES_EXPORTER`: a comma-separated list of `otlp` (the default when only an OTLP endpoint is set),
`console` and `none`. `otlp` speaks `OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL` (`http/protobuf` by default, or
`grpc`) and reads its endpoint, headers and timeout from the OTEL_EXPORTER_OTLP_* variables itself; the batch
processor reads OTEL_BSP_*; the resource OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (service.name
defaults to `agentrag`). A provider the application already installed globally is used as it is.
"""

from __future__ import annotations

from collections.abc import Mapping

from agentrag.errors import ConfigError

try:
    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter
except ImportError as exc:
    raise ConfigError(
        'OTEL_* variables ask for traces, and the OpenTelemetry SDK is not installed: pip install "agentrag[otel]" '
        "(or unset OTEL_TRACES_EXPORTER / OTEL_EXPORTER_OTLP_ENDPOINT, or set OTEL_SDK_DISABLED=true)"
    ) from exc

EXPORTERS = ("otlp", "console", "none")


def provider_from_environment(env: Mapping[str, str], default_exporter: str = "otlp") -> TracerProvider:
    installed = trace.get_tracer_provider()
    if isinstance(installed, TracerProvider):  # the application's own: its exporters are already on it
        return installed
    resource = Resource.create()
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(Resource({"service.name": "agentrag"}))
    provider = TracerProvider(resource=resource)
    for exporter in exporters(env, default_exporter):
        provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider


def exporters(env: Mapping[str, str], default_exporter: str = "otlp") -> list[SpanExporter]:
    names = [n.strip().lower() for n in env.get("OTEL_TRACES_EXPORTER", default_exporter).split(",") if n.strip()]
    unknown = [n for n in names if n not in EXPORTERS]
    if unknown:
        raise ConfigError(
            f"OTEL_TRACES_EXPORTER: unknown exporter {unknown[0]!r} (agentrag supports: {', '.join(EXPORTERS)})"
        )
    found: list[SpanExporter] = []
    for name in dict.fromkeys(names):
        if name == "console":
            found.append(ConsoleSpanExporter())
        elif name == "otlp":
            found.append(_otlp(env))
    return found


def _otlp(env: Mapping[str, str]) -> SpanExporter:
    protocol = (
        env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or env.get("OTEL_EXPORTER_OTLP_PROTOCOL") or "http/protobuf"
    )
    try:
        if protocol == "grpc":
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter

            grpc: SpanExporter = GrpcExporter()
            return grpc
        if protocol == "http/protobuf":
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter

            http: SpanExporter = HttpExporter()
            return http
    except ImportError:
        package = "opentelemetry-exporter-otlp-proto-" + ("grpc" if protocol == "grpc" else "http")
        raise ConfigError(
            f'OTEL_TRACES_EXPORTER=otlp ({protocol}) needs {package}: pip install "agentrag[otlp]" (http/protobuf) '
            f"or pip install {package}"
        ) from None
    raise ConfigError(f"OTEL_EXPORTER_OTLP_PROTOCOL: unknown protocol {protocol!r} (use http/protobuf or grpc)")
