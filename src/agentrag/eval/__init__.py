"""`agentrag eval`: benchmark-format data, metrics, the runner, and the report."""
