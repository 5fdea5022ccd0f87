"""Every closed vocabulary of agentrag, defined once.

The CLI's choices, the HTTP service's request models, the settings' validation, the trace and the answer
contract all derive from these enums; nothing else spells their values. They are `StrEnum`s, so a member
compares equal to its string, serialises as it in JSON, and validates from it in pydantic models.

Adding a member is the whole change for a vocabulary whose values are data (a preset is also a TOML file
in `agentrag/presets/`; a mode is also a module in `agentrag/agent/modes/`: see there).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal


class Channel(StrEnum):
    """What a search runs: both channels fused, or one of them alone."""

    HYBRID = "hybrid"
    BM25 = "bm25"
    DENSE = "dense"


class Ranking(StrEnum):
    """The per-hit rankings that fusion combines (`Hit.channels` keys)."""

    BM25 = "bm25"
    DENSE = "dense"
    FEEDBACK = "feedback"  # the dense search repeated with the query moved toward its best hits


class Mode(StrEnum):
    """How a question is answered. Every member but AUTO is a module `agentrag.agent.modes.<value>`."""

    AUTO = "auto"  # the router picks one of the others
    DIRECT = "direct"  # no retrieval (chit-chat, questions about the assistant)
    SINGLE = "single"  # retrieve once, answer
    ITERATIVE = "iterative"  # retrieve, grade, relax, rewrite, retry (corrective RAG)
    AGENT = "agent"  # plan sub-queries, search, follow bridges; with an LLM, a tool-calling loop


class Preset(StrEnum):
    """Named budgets; each is the file `agentrag/presets/<value>.toml`."""

    FAST = "fast"
    BALANCED = "balanced"
    THOROUGH = "thorough"


class StopReason(StrEnum):
    """Why answering stopped: derived once per question from what happened (see `agent.run.Outcome`)."""

    ANSWERED = "answered"
    BUDGET = "budget"  # a budget ran out and the answer was written from what had been found
    NO_EVIDENCE = "no_evidence"  # nothing usable was found
    FALLBACK = "fallback"  # an LLM role failed and its model-free stand-in answered
    ERROR = "error"  # answering failed: an apology with the trace id


class Confidence(StrEnum):
    """How sure an answer is, from its evidence (`ask --json` "confidence")."""

    HIGH = "high"  # every part of the question is answered by a passage of the expected kind
    PARTIAL = "partial"  # some part is answered, or the answer is of a weaker kind than asked for
    LOW = "low"  # nothing found answers the question; the closest passages are shown as such


class AnswerType(StrEnum):
    """What kind of answer a question asks for (question analysis)."""

    DEFINITION = "definition"  # what does X mean, X 是什么
    PERSON = "person"  # who: a person or a team
    DATE = "date"  # when: a date or a time
    NUMBER = "number"  # how many / how much: a number or an amount, with its unit
    DURATION = "duration"  # how long
    LEVEL = "level"  # which severity, priority, tier: SEV-2, P1, 二级
    YES_NO = "yes_no"
    CHOICE = "choice"  # which of the named options
    LIST = "list"  # which ones, what are the ...
    PROCEDURE = "procedure"  # how to, steps
    REASON = "reason"  # why
    PLACE = "place"  # where
    ENTITY = "entity"  # any other name or thing


class LLMRole(StrEnum):
    """The jobs an LLM can be given; each may have its own model (`llm.role_models`)."""

    ROUTER = "router"
    PLANNER = "planner"
    GRADER = "grader"
    REWRITER = "rewriter"
    SYNTHESIZER = "synthesizer"
    SUMMARIZER = "summarizer"
    AGENT = "agent"


class TraceStep(StrEnum):
    """The steps a trace event can record."""

    MEMORY = "memory"
    REWRITE = "rewrite"
    ROUTE = "route"
    PLAN = "plan"
    SEARCH = "search"
    GRADE = "grade"
    SUFFICIENCY = "sufficiency"
    AGENT = "agent"
    TOOL = "tool"
    LLM = "llm"  # one completed model call: role, model, tokens, time (no progress message)
    BUDGET = "budget"
    SYNTHESIZE = "synthesize"
    CITE = "cite"
    FALLBACK = "fallback"
    ERROR = "error"
    DONE = "done"


class ExportFormat(StrEnum):
    """The evaluation tools `eval --task answer --export` writes a file for (`agentrag.eval.export`)."""

    RAGAS = "ragas"
    DEEPEVAL = "deepeval"


# How structured output is requested from an endpoint (`llm.json_mode`, and what the endpoint turns out to accept).
JsonMode = Literal["json_schema", "json_object", "none"]

# Passage grades stay a Literal: they never reach a command line or a request model.
Grade = Literal["correct", "ambiguous", "incorrect"]


class MilvusIndex(StrEnum):
    """The dense index types the Milvus backend creates (the ones Milvus Lite 2.5 and a server both build)."""

    FLAT = "FLAT"
    IVF_FLAT = "IVF_FLAT"
    AUTOINDEX = "AUTOINDEX"


class StoreBackend(StrEnum):
    """Where a knowledge base keeps its data (`[store] backend`)."""

    SQLITE = "sqlite"  # one embedded file per knowledge base
    MILVUS = "milvus"  # a Milvus server or cluster, or a Milvus Lite file


class WorkerStart(StrEnum):
    """How ingest worker processes start (`[ingest] worker_start`; Python's multiprocessing start methods)."""

    FORK = "fork"  # a copy of this process: modules and jieba's dictionary already loaded (POSIX)
    SPAWN = "spawn"  # a fresh interpreter: safe anywhere, about a second more per worker for Chinese
    FORKSERVER = "forkserver"  # forked from a fresh server process (POSIX)
