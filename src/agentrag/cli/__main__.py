"""`python -m agentrag.cli ...`, as `agentrag ...`."""

from agentrag.cli import main

main()
