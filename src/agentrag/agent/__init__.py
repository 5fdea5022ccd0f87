"""The agent: a run per question (run.py), answer modes (modes/), the steps they compose (steps.py), roles with
one job each (router, planner, grader, rewriter, synthesizer; each with an LLM and a model-free version chosen
through roles.py), the tool loop (loop.py, tools/), budgets, the citation check and finishing (finish.py)."""
