"""Chinese parts of speech from mapped tag files: the same tags as jieba's own tagger, made once per dictionary."""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

_TAGGING = r"""
import sys
import jieba
from agentrag.agent.pos import WordTags, posseg

module = posseg()
assert isinstance(module.dt.word_tag_tab, WordTags), type(module.dt.word_tag_tab)
reference = module.POSTokenizer(jieba.dt)  # jieba's own loop over its dictionary
for text in sys.argv[1:]:
    for hmm in (False, True):
        ours = [(w.word, w.flag) for w in module.cut(text, HMM=hmm)]
        theirs = [(w.word, w.flag) for w in reference.cut(text, HMM=hmm)]
        assert ours == theirs, (ours, theirs)
if "--every-word" in sys.argv:
    table = module.dt.word_tag_tab
    assert len(table) == len(reference.word_tag_tab)
    assert all(table.get(word) == tag for word, tag in reference.word_tag_tab.items())
print("ok")
"""


def test_chinese_parts_of_speech_are_jiebas_own_read_from_mapped_files(tmp_path: Path) -> None:
    """`import jieba.posseg` reads the tag of each of 349,046 words into a dict in every process (0.32-0.46 s of
    each CLI `ask` in Chinese); the tags are kept in mapped files instead, and tag every word as jieba does."""
    cache = Path(tempfile.gettempdir()) / "jieba.cache"
    if cache.is_file():  # jieba's own cache, so that it does not build it again in this temp folder
        shutil.copy(cache, tmp_path / "jieba.cache")
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    texts = ["北风实验室的张三在北京大学工作。", "出差住宿标准是多少？一线城市500元/晚", "Aurora 3.0 的 E1042 错误"]

    def run(*extra: str) -> None:
        done = subprocess.run(
            [sys.executable, "-c", _TAGGING, *texts, *extra], env=env, capture_output=True, text=True, timeout=300
        )
        assert done.stdout.strip() == "ok", done.stderr

    run("--every-word")  # the files made
    folders = list(tmp_path.glob("agentrag-jieba-pos-*"))
    assert len(folders) == 1
    made = (folders[0] / "tags.npy").stat().st_mtime_ns
    run()  # and read by the next process, not made again
    assert (folders[0] / "tags.npy").stat().st_mtime_ns == made


_FIRST_CHINESE_WORK = r"""
import sys
from agentrag.agent.planner import rule_plan
from agentrag.agent.zh_values import asked_unit
from agentrag.agent import gap

which = sys.argv[1]
if which == "compare":
    rule_plan("标准版和企业版有什么区别？", 4)
elif which == "unit":
    asked_unit("这座楼有多少平方米？")
elif which == "words":
    gap.words("北风实验室的出差住宿标准")
import jieba
from agentrag.text import tokenize
assert jieba.marshal is tokenize._WholeFileMarshal, "jieba was set up outside ensure_jieba"
print("ok")
"""


def test_chinese_questions_load_jieba_quietly_whatever_reads_them_first(tmp_path: Path) -> None:
    """A comparison question is cut by the planner before anything is searched. jieba set up there by its own
    `lcut` printed "Building prefix dict from the default dictionary ... Loading model cost 0.864 seconds" on the
    user's terminal and read its cache the slow way; every agent module now goes through `text.tokenize.segment`."""
    cache = Path(tempfile.gettempdir()) / "jieba.cache"
    if cache.is_file():
        shutil.copy(cache, tmp_path / "jieba.cache")
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    for which in ("compare", "unit", "words"):
        done = subprocess.run(
            [sys.executable, "-c", _FIRST_CHINESE_WORK, which], env=env, capture_output=True, text=True, timeout=300
        )
        assert done.stdout.strip() == "ok", (which, done.stderr)
        assert "prefix dict" not in done.stderr, (which, done.stderr)
        assert "Loading model" not in done.stderr, (which, done.stderr)
