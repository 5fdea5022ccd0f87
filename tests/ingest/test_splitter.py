import itertools

import pytest

from agentrag.ingest.splitter import Splitter, document_text
from agentrag.settings import ChunkingSettings
from agentrag.types import Block

EN_SENTENCE = "The quick brown fox jumps over the lazy dog near the river bank today."  # 70 chars
ZH_SENTENCE = "北风实验室的检索服务在每个工作日的早上九点自动完成索引重建。"  # 30 chars


def split(blocks: list[Block], **kw: int) -> list:
    return Splitter(ChunkingSettings(**kw)).split(blocks)


def test_chunks_are_exact_spans_of_the_document_text() -> None:
    blocks = [Block(text=" ".join([EN_SENTENCE] * 20)), Block(text=ZH_SENTENCE * 30)]
    text = document_text(blocks)
    for c in split(blocks):
        assert text[c.char_start : c.char_end] == c.text


def test_chunk_size_is_respected_and_sentences_are_never_cut() -> None:
    blocks = [Block(text=" ".join([EN_SENTENCE] * 30))]
    chunks = split(blocks, chunk_size=300, chunk_overlap=60)
    assert len(chunks) > 5
    for c in chunks:
        assert len(c.text) <= 300
        assert c.text.startswith("The quick")
        assert c.text.endswith("today.")


def test_chinese_sentences_split_at_chinese_full_stops() -> None:
    chunks = split([Block(text=ZH_SENTENCE * 40)], chunk_size=200, chunk_overlap=40, min_chunk_size=0)
    assert len(chunks) >= 6
    for c in chunks:
        assert len(c.text) <= 200
        assert c.text.endswith("。")


def test_overlap_repeats_the_previous_chunks_last_sentence() -> None:
    chunks = split([Block(text=ZH_SENTENCE * 40)], chunk_size=200, chunk_overlap=40, min_chunk_size=0)
    for prev, nxt in itertools.pairwise(chunks):
        assert nxt.char_start < prev.char_end, "consecutive chunks inside one paragraph overlap"
        assert prev.char_end - nxt.char_start <= 80


def test_chunks_never_cross_headings_and_keep_their_heading_path() -> None:
    blocks = [
        Block(text="Intro text.", heading_path=("Guide",)),
        Block(text="Install with pip.", heading_path=("Guide", "Install")),
        Block(text="Run the server.", heading_path=("Guide", "Usage")),
    ]
    chunks = split(blocks)
    assert [c.heading_path for c in chunks] == [("Guide",), ("Guide", "Install"), ("Guide", "Usage")]
    assert [c.text for c in chunks] == ["Intro text.", "Install with pip.", "Run the server."]


def test_paragraphs_are_packed_together_up_to_the_size() -> None:
    paragraphs = [Block(text=f"Paragraph {i}. " + EN_SENTENCE) for i in range(6)]
    chunks = split(paragraphs, chunk_size=200, chunk_overlap=0, min_chunk_size=0)
    assert len(chunks) == 3
    assert chunks[0].text.count("Paragraph") == 2


def test_a_short_tail_joins_the_previous_chunk() -> None:
    text = " ".join([EN_SENTENCE] * 6) + " Short end."
    chunks = split([Block(text=text)], chunk_size=300, chunk_overlap=0, min_chunk_size=60)
    assert chunks[-1].text.endswith("Short end.")
    assert len(chunks[-1].text) > 60


def test_pages_follow_their_blocks() -> None:
    blocks = [Block(text=EN_SENTENCE, page=1), Block(text=ZH_SENTENCE, page=2)]
    chunks = split(blocks, chunk_size=100, chunk_overlap=0, min_chunk_size=0)
    assert [c.page for c in chunks] == [1, 2]


def test_one_giant_sentence_without_punctuation_is_wrapped() -> None:
    chunks = split([Block(text="字" * 1300)], chunk_size=500, chunk_overlap=50)
    assert sum(len(c.text) for c in chunks) >= 1300
    assert all(len(c.text) <= 500 for c in chunks)


def test_overlap_setting_must_be_below_half_the_size() -> None:
    with pytest.raises(ValueError, match="chunk_overlap"):
        ChunkingSettings(chunk_size=100, chunk_overlap=60)
