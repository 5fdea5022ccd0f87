"""The HTTP service (FastAPI): `agentrag serve`, API keys, streaming answers, the web page."""
