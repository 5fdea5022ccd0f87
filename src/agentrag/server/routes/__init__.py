"""The service's routes, one module per concern, each an `APIRouter` included by `agentrag.server.app`."""
