"""`direct`: no retrieval. Greetings and questions about the assistant itself get a short reply."""

from __future__ import annotations

from agentrag.agent.roles import LLMCall, llm_or_rules
from agentrag.agent.run import Draft, Run
from agentrag.agent.steps import Steps
from agentrag.text.tokenize import has_cjk
from agentrag.vocab import Confidence, LLMRole, TraceStep


def answer(run: Run, steps: Steps) -> Draft:
    n = steps.count_documents()
    decided = llm_or_rules(
        steps.llm_call(run, reserve=0), lambda call: _with_llm(run, steps, call, n), lambda: _canned(run, steps, n)
    )
    if decided.llm_failed:
        run.tracer.emit(TraceStep.FALLBACK, decision="canned reply", reason=decided.failure)
    return Draft(decided.value, confidence=Confidence.HIGH)  # nothing to look up: the reply is complete


def _with_llm(run: Run, steps: Steps, call: LLMCall, n: int) -> str:
    response = call.client.chat(
        [
            {
                "role": "system",
                "content": "You are agentrag, an assistant that answers questions about the "
                f"{n} documents in the knowledge base '{steps.kb_name}'. Reply briefly "
                "and kindly; for facts, ask the user to ask about the documents. Reply in the user's "
                "language.",
            },
            {"role": "user", "content": run.question},
        ],
        role=LLMRole.SYNTHESIZER,
        timeout_s=call.timeout_s,
        meter=call.meter,
    )
    return response.content.strip()


def _canned(run: Run, steps: Steps, n: int) -> str:
    if has_cjk(run.question):
        return (
            f"你好！我可以根据知识库“{steps.kb_name}”中的 {n} 份文档回答问题，并给出引用来源。"
            "请直接提问，例如“某项规定是怎样的？”"
        )
    return (
        f"Hello! I answer questions from the {n} documents in the knowledge base '{steps.kb_name}', with "
        "citations. Ask me about anything they cover."
    )
