"""The agent: roles with one job each (router, planner, grader, rewriter, sufficiency check, synthesizer),
the tool loop, budgets and the citation check. Every role has an LLM and a model-free implementation."""
