"""Loaders: what a user sees after ingesting a file (text, headings, pages, title, date) or the one-line error."""

from __future__ import annotations

import datetime as dt
import io
import json
import logging
import random
import zipfile
from pathlib import Path

import pytest

from agentrag.errors import LoadError
from agentrag.ingest.loaders import SUPPORTED_SUFFIXES, load_path
from agentrag.types import LoadedDocument

LIMIT = 64 * 1024 * 1024


def load_one(path: Path, max_bytes: int = LIMIT) -> LoadedDocument:
    docs = load_path(path, max_bytes)
    assert len(docs) == 1
    return docs[0]


def load_error(path: Path, max_bytes: int = LIMIT) -> LoadError:
    with pytest.raises(LoadError) as info:
        load_path(path, max_bytes)
    assert info.value.path == str(path)
    assert "\n" not in str(info.value)
    return info.value


def texts(doc: LoadedDocument) -> list[str]:
    return [b.text for b in doc.blocks]


# ---------------------------------------------------------------------------------------------- txt


def test_gbk_chinese_txt(tmp_path: Path) -> None:
    content = (
        "机器学习简介\n"
        "\n"
        "发布日期：2023年5月1日\n"
        "\n"
        "机器学习是人工智能的一个分支，它研究计算机怎样模拟或实现人类的学习行为，以获取新的\n"
        "知识或技能，重新组织已有的知识结构使之不断改善自身的性能，这是人工智能的核心问题之\n"
        "一，也是使计算机具有智能的根本途径。\n"
        "\n"
        "深度学习是机器学习的一个子领域。\n"
    )
    path = tmp_path / "ml.txt"
    path.write_bytes(content.encode("gbk"))
    doc = load_one(path)
    assert doc.title == "机器学习简介"
    assert doc.date == dt.date(2023, 5, 1)
    # Hard-wrapped Chinese lines are re-joined with nothing between them.
    assert (
        "机器学习是人工智能的一个分支，它研究计算机怎样模拟或实现人类的学习行为，以获取新的知识或技能，"
        "重新组织已有的知识结构使之不断改善自身的性能，这是人工智能的核心问题之一，也是使计算机具有智能的根本途径。"
    ) in texts(doc)
    assert texts(doc)[-1] == "深度学习是机器学习的一个子领域。"
    assert all(b.heading_path == () and b.page is None for b in doc.blocks)


def test_utf8_bom_txt(tmp_path: Path) -> None:
    path = tmp_path / "bom.txt"
    path.write_bytes("\ufeffRelease notes\n\nVersion 2 fixes the login bug.\n".encode())
    doc = load_one(path)
    assert doc.title == "Release notes"  # no invisible BOM glued to the title
    assert texts(doc) == ["Release notes", "Version 2 fixes the login bug."]


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le", "utf-16-be"])
def test_utf16_txt(tmp_path: Path, codec: str) -> None:
    path = tmp_path / "unicode.txt"
    path.write_bytes("会议纪要\r\n\r\nThe meeting agreed on the 2024 budget.\r\n".encode(codec))
    doc = load_one(path)
    assert doc.title == "会议纪要"
    assert texts(doc) == ["会议纪要", "The meeting agreed on the 2024 budget."]


def test_english_hard_wrapped_paragraphs_are_rejoined_and_lists_kept(tmp_path: Path) -> None:
    first = "This is a long opening line that is far more than eighty characters wide and so cannot be a title."
    body = (
        f"{first}\n"
        "\n"
        "The quarterly review covered the budget for next year and the hiring plan\n"
        "for the engineering team. Everyone agreed that the roadmap needs more detail\n"
        "before the board meeting on March 3, 2024.\n"
        "\n"
        "- buy servers\n"
        "- hire two engineers\n"
    )
    path = tmp_path / "review-notes.txt"
    path.write_text(body, encoding="utf-8")
    doc = load_one(path)
    assert doc.title == "review-notes"  # first line too long for a title: the file name stands in
    assert doc.date == dt.date(2024, 3, 3)
    assert texts(doc)[1] == (
        "The quarterly review covered the budget for next year and the hiring plan for the engineering team. "
        "Everyone agreed that the roadmap needs more detail before the board meeting on March 3, 2024."
    )
    assert texts(doc)[2] == "- buy servers\n- hire two engineers"


def test_unwrapped_chinese_lines_are_paragraphs(tmp_path: Path) -> None:
    # Chinese text often has no blank lines: one long line per paragraph.
    one = "第一段：" + "北京是中华人民共和国的首都，也是全国的政治中心和文化中心。" * 3
    two = "第二段：" + "上海是中国最大的经济中心城市，也是国际金融中心之一。" * 3
    path = tmp_path / "cities.txt"
    path.write_text(f"城市介绍\n{one}\n{two}\n", encoding="utf-8")
    doc = load_one(path)
    assert texts(doc) == ["城市介绍", one, two]


def test_a_hanging_indent_carries_on_the_line_above(tmp_path: Path) -> None:
    """An action item wrapped under its own text ("AI-4  Give the Kestrel version endpoint its own small connection
    pool, so" / "      freshness checks survive …") was cut after "so": an indented line opens a paragraph only after
    a line that ends a sentence."""
    items = (
        "AI-1  Validate the rendered Kestrel worker configuration in continuous integration: reject every\n"
        "      unknown key and require a pool size of at least thirty-two. Owner: Sun Hao.\n"
        "AI-4  Give the Kestrel version endpoint its own small connection pool, so that the\n"
        "      freshness checks survive worker saturation. Owner: Sun Hao.\n"
    )
    intro = "The review agreed on the following action items for the team, each with an owner and a due date.\n"
    path = tmp_path / "items.txt"
    path.write_text(f"Action items\n\n{intro}\n{items}\n    Indented paragraph after a full stop.\n", encoding="utf-8")
    text = "\n".join(texts(load_one(path)))
    assert "connection pool, so that the freshness checks survive worker saturation." in text
    assert "reject every unknown key and require" in text


def test_wiki_style_headings_in_a_txt_file_are_headings_not_text(tmp_path: Path) -> None:
    """ "== Root cause ==" in a postmortem was a paragraph of its own, and came back as a sentence of an answer: the
    heading lines of wiki markup give the paragraphs under them their heading path."""
    path = tmp_path / "postmortem.txt"
    path.write_text(
        "INC-7 postmortem\n\n== Summary ==\n\nSearches failed for an hour.\n\n== Root cause ==\n\n"
        "=== Configuration ===\n\nThe pool size was empty.\n\n== Follow-ups ==\n\nAdd a check.\n",
        encoding="utf-8",
    )
    doc = load_one(path)
    assert [(b.heading_path, b.text) for b in doc.blocks] == [
        ((), "INC-7 postmortem"),
        (("Summary",), "Searches failed for an hour."),
        (("Root cause", "Configuration"), "The pool size was empty."),
        (("Follow-ups",), "Add a check."),
    ]


# ---------------------------------------------------------------------------------------------- markdown

MARKDOWN = """---
title: "Deployment Guide"
date: 2024-03-05
tags: [ops, k8s]
author: Li Wei
---

# Deployment

Intro paragraph with *emphasis*, a [link to the docs](https://example.com/secret-url) and `kubectl`
wrapped onto a second line.

## Install

Run the installer:

```bash
./install.sh --prefix /opt

echo "done"
```

- step one
- step two
  continues here
- step three

### Verify

中文段落的第一行
和第二行。

Troubleshooting
---------------

Check the logs.

# Appendix

Final words.
"""


def test_markdown_headings_front_matter_code_and_lists(tmp_path: Path) -> None:
    path = tmp_path / "guide.md"
    path.write_text(MARKDOWN, encoding="utf-8")
    doc = load_one(path)
    assert doc.title == "Deployment Guide"
    assert doc.date == dt.date(2024, 3, 5)
    assert doc.meta == {"tags": "ops, k8s", "author": "Li Wei"}
    by_text = {b.text: b.heading_path for b in doc.blocks}
    assert by_text == {
        "Intro paragraph with emphasis, a link to the docs and kubectl wrapped onto a second line.": ("Deployment",),
        "Run the installer:": ("Deployment", "Install"),
        './install.sh --prefix /opt\n\necho "done"': ("Deployment", "Install"),
        "- step one\n- step two continues here\n- step three": ("Deployment", "Install"),
        "中文段落的第一行和第二行。": ("Deployment", "Install", "Verify"),
        "Check the logs.": ("Deployment", "Troubleshooting"),
        "Final words.": ("Appendix",),
    }
    full = doc.text
    for syntax in ("secret-url", "*", "`", "title:", "---"):
        assert syntax not in full, syntax


def test_markdown_title_falls_back_to_first_h1_then_stem(tmp_path: Path) -> None:
    with_h1 = tmp_path / "a.markdown"
    with_h1.write_text("Intro text.\n\n# Real Title\n\nBody.\n", encoding="utf-8")
    assert load_one(with_h1).title == "Real Title"
    without = tmp_path / "plain-notes.md"
    without.write_text("## Only a section\n\nBody text.\n", encoding="utf-8")
    doc = load_one(without)
    assert doc.title == "plain-notes"
    assert doc.blocks[0].heading_path == ("Only a section",)


def test_markdown_raw_html_does_not_leak(tmp_path: Path) -> None:
    path = tmp_path / "html.md"
    path.write_text('<div align="center"><b>Logo</b> &amp; name</div>\n\nText with <br> inline <i>tags</i>.\n')
    doc = load_one(path)
    assert texts(doc) == ["Logo & name", "Text with\ninline tags."]


def test_markdown_with_only_front_matter_has_no_text(tmp_path: Path) -> None:
    path = tmp_path / "empty.md"
    path.write_text("---\ntitle: Nothing here\n---\n\n", encoding="utf-8")
    assert load_error(path).reason == "no text could be extracted"


# ---------------------------------------------------------------------------------------------- HTML

ARTICLE_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Solar Panels Guide | Example Site</title>
<meta property="article:published_time" content="2023-05-17T10:00:00Z">
<script>var tracking = "SCRIPT_SECRET";</script><style>.x { color: red } /* STYLE_SECRET */</style></head>
<body>
<header><div class="logo">HEADER_LOGO</div></header>
<nav><ul><li><a href="/">NAV_HOME</a></li><li><a href="/about">NAV_ABOUT</a></li></ul></nav>
<div id="cookie-banner" class="cookie-consent">COOKIE_BANNER We use cookies. Accept all?</div>
<main><article>
<h1>How solar panels work</h1>
<p>Solar panels convert sunlight into electricity using photovoltaic cells made of silicon. Each cell produces a
small voltage when photons knock electrons loose &amp; the current flows through a circuit.</p>
<h2>Efficiency</h2>
<p>Modern panels reach an efficiency of about 22 percent under standard test conditions. Efficiency drops as the
temperature of the panel rises, which is why installers leave an air gap behind the modules.</p>
<ul><li>Monocrystalline panels are the most efficient.</li><li>Polycrystalline panels are cheaper.</li></ul>
<h3>Temperature coefficient</h3>
<p>The temperature coefficient tells how much output is lost per degree above 25 &deg;C; a typical value is
&minus;0.35&nbsp;% per degree. See <a href="https://example.com/datasheet">the datasheet</a> for details.</p>
<table><tr><th>Type</th><th>Efficiency</th></tr><tr><td>Mono</td><td>22%</td></tr><tr><td>Poly</td><td>18%</td></tr>
</table>
</article></main>
<aside>ASIDE_RELATED Related posts</aside>
<footer>FOOTER_COPYRIGHT &copy; 2023 Example</footer>
<script>console.log("SCRIPT_TWO")</script>
</body></html>
"""


def test_html_article_without_navigation_scripts_or_footer(tmp_path: Path) -> None:
    path = tmp_path / "solar.html"
    path.write_text(ARTICLE_PAGE, encoding="utf-8")
    doc = load_one(path)
    full = doc.text
    junk = (
        "SCRIPT_SECRET",
        "STYLE_SECRET",
        "HEADER_LOGO",
        "NAV_HOME",
        "COOKIE_BANNER",
        "ASIDE_RELATED",
        "FOOTER_COPYRIGHT",
        "SCRIPT_TWO",
        "https://",
    )
    markup = ("<", "&amp;", "&deg;", "&nbsp;", "\xa0")
    for leak in junk + markup:
        assert leak not in full, leak
    assert doc.title == "Solar Panels Guide | Example Site"
    assert doc.date == dt.date(2023, 5, 17)
    paths = {b.text.split(" ")[0]: b.heading_path for b in doc.blocks}
    assert paths["Solar"] == ("How solar panels work",)
    assert paths["Modern"] == ("How solar panels work", "Efficiency")
    assert paths["The"] == ("How solar panels work", "Efficiency", "Temperature coefficient")
    assert "electrons loose & the current" in full
    assert "above 25 °C" in full
    assert "a typical value is −0.35 % per degree. See the datasheet for details." in full
    assert "- Monocrystalline panels are the most efficient.\n- Polycrystalline panels are cheaper." in texts(doc)
    assert "Type | Efficiency\nMono | 22%\nPoly | 18%" in texts(doc)


def test_tiny_html_page_uses_the_fallback_and_still_drops_chrome(tmp_path: Path) -> None:
    page = (
        "<html><head><title>Tiny</title><script>var SECRET=1</script></head><body>"
        "<nav>NAV_LINK Home | About</nav><h1>Hello</h1>Loose text &amp; more<br>next line"
        '<div class="cookie-banner">COOKIE accept</div><p>Para <b>bold</b> &lt;tag&gt;</p>'
        "<ul><li>one</li><li>two</li></ul><footer>FOOT</footer></body></html>"
    )
    path = tmp_path / "tiny.htm"
    path.write_text(page, encoding="utf-8")
    doc = load_one(path)
    assert doc.title == "Tiny"
    assert texts(doc) == ["Loose text & more\nnext line", "Para bold <tag>", "- one\n- two"]
    assert all(b.heading_path == ("Hello",) for b in doc.blocks)
    for junk in ("SECRET", "NAV_LINK", "COOKIE", "FOOT"):
        assert junk not in doc.text, junk


def test_html_in_gbk_with_meta_charset(tmp_path: Path) -> None:
    page = (
        '<html><head><meta http-equiv="Content-Type" content="text/html; charset=gb2312">'
        "<title>公司简介</title></head><body><h1>公司简介</h1>"
        "<p>我们公司成立于二零零八年，专注于搜索引擎和知识管理软件的研发，服务超过一千家企业客户。</p>"
        "</body></html>"
    )
    path = tmp_path / "about.html"
    path.write_bytes(page.encode("gbk"))
    doc = load_one(path)
    assert doc.title == "公司简介"
    assert "我们公司成立于二零零八年" in doc.text


def test_html_with_only_scripts_has_no_text(tmp_path: Path) -> None:
    path = tmp_path / "app.html"
    path.write_text("<html><head><script>render()</script></head><body><div id='root'></div></body></html>")
    assert load_error(path).reason == "no text could be extracted"


# ---------------------------------------------------------------------------------------------- PDF


def make_pdf(path: Path, title: str | None = "Annual Report on Widgets") -> Path:
    fpdf = pytest.importorskip("fpdf")
    pdf = fpdf.FPDF()
    if title is not None:
        pdf.set_title(title)
    pdf.set_creation_date(dt.datetime(2022, 6, 30, 12, 0, tzinfo=dt.UTC))
    pdf.add_page()
    pdf.set_font("helvetica", "B", 16)
    pdf.cell(0, 10, "Chapter One: Widgets", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("helvetica", size=11)
    pdf.multi_cell(0, 6, "Widgets are small mechanical devices used in many factories. " * 5)
    pdf.ln(4)
    pdf.multi_cell(0, 6, "The second paragraph covers gadgets and their history in Europe. " * 4)
    pdf.add_page()
    pdf.multi_cell(0, 6, "Page two discusses sprockets and gears in some detail. " * 4)
    pdf.ln(4)
    pdf.multi_cell(0, 6, "Final words about maintenance.")
    pdf.output(str(path))
    return path


def test_two_page_pdf_keeps_pages_and_paragraphs(tmp_path: Path) -> None:
    doc = load_one(make_pdf(tmp_path / "report.pdf"))
    assert doc.title == "Annual Report on Widgets"
    assert doc.date == dt.date(2022, 6, 30)
    assert doc.meta["pages"] == "2"
    assert [(b.page, b.text.split(" ")[0]) for b in doc.blocks] == [
        (1, "Chapter"),
        (1, "Widgets"),
        (1, "The"),
        (2, "Page"),
        (2, "Final"),
    ]
    assert doc.blocks[0].text == "Chapter One: Widgets"
    # Lines wrapped by the PDF layout are joined back into one paragraph.
    assert doc.blocks[1].text == ("Widgets are small mechanical devices used in many factories. " * 5).strip()
    assert doc.blocks[4].text == "Final words about maintenance."


def test_pdf_without_metadata_title_uses_its_large_first_heading(tmp_path: Path) -> None:
    assert load_one(make_pdf(tmp_path / "report.pdf", title=None)).title == "Chapter One: Widgets"
    assert load_one(make_pdf(tmp_path / "scan-0042.pdf", title="Untitled")).title == "Chapter One: Widgets"


def test_chinese_pdf_with_cid_font(tmp_path: Path) -> None:
    pytest.importorskip("reportlab")
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.pdfgen import canvas

    pdfmetrics.registerFont(UnicodeCIDFont("STSong-Light"))
    path = tmp_path / "zh.pdf"
    page = canvas.Canvas(str(path))
    page.setFont("STSong-Light", 12)
    page.drawString(72, 750, "机器学习是人工智能的一个分支，")
    page.drawString(72, 734, "它研究计算机如何从数据中学习规律。")
    page.drawString(72, 690, "第二段：深度学习使用多层神经网络。")
    page.showPage()
    page.save()
    doc = load_one(path)
    # reportlab's default metadata ("untitled", "anonymous") is not a title or an author.
    assert doc.title == "zh"
    assert "author" not in doc.meta
    assert texts(doc) == [
        "机器学习是人工智能的一个分支，它研究计算机如何从数据中学习规律。",  # wrapped CJK lines joined without a space
        "第二段：深度学习使用多层神经网络。",
    ]
    assert all(b.page == 1 for b in doc.blocks)


def test_truncated_pdf_is_corrupt_and_quiet(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    good = make_pdf(tmp_path / "good.pdf").read_bytes()
    path = tmp_path / "broken.pdf"
    path.write_bytes(good[: len(good) // 2])
    with caplog.at_level(logging.DEBUG):
        error = load_error(path)
    assert error.reason.startswith("corrupt PDF (truncated? no end-of-file marker): ")
    assert not [r for r in caplog.records if r.name.startswith("pypdf")]  # our one line is the message
    assert logging.getLogger("pypdf").level == logging.NOTSET  # and pypdf's logger is left as it was


def test_garbage_after_pdf_header_is_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "garbage.pdf"
    rnd = random.Random(0)
    path.write_bytes(b"%PDF-1.4\n" + bytes(rnd.randrange(256) for _ in range(3000)) + b"\n%%EOF\n")
    assert load_error(path).reason.startswith("corrupt PDF")


def test_text_file_named_pdf_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.pdf"
    path.write_text("just some text, not a PDF")
    assert str(load_error(path)) == f"{path}: not a PDF (content does not match .pdf)"


def test_password_protected_pdf(tmp_path: Path) -> None:
    from pypdf import PdfWriter

    source = make_pdf(tmp_path / "plain.pdf")
    locked = PdfWriter(clone_from=str(source))
    locked.encrypt("secret", algorithm="RC4-128")
    locked_path = tmp_path / "locked.pdf"
    locked.write(str(locked_path))
    assert load_error(locked_path).reason == "encrypted PDF (password required)"
    # Owner-password-only PDFs (copy/print restrictions) open with an empty user password.
    restricted = PdfWriter(clone_from=str(source))
    restricted.encrypt("", owner_password="owner", algorithm="RC4-128")
    restricted_path = tmp_path / "restricted.pdf"
    restricted.write(str(restricted_path))
    assert load_one(restricted_path).blocks[0].text == "Chapter One: Widgets"


def test_scanned_pdf_has_no_extractable_text(tmp_path: Path) -> None:
    fpdf = pytest.importorskip("fpdf")
    image = pytest.importorskip("PIL.Image")
    scan = image.new("RGB", (200, 100), "white")
    pdf = fpdf.FPDF()
    pdf.add_page()
    pdf.image(scan, x=10, y=10, w=100)
    path = tmp_path / "scan.pdf"
    pdf.output(str(path))
    assert load_error(path).reason == "no extractable text (scanned PDF? OCR is not supported)"


# ---------------------------------------------------------------------------------------------- DOCX


def make_docx(path: Path, core_title: str = "") -> Path:
    import docx

    document = docx.Document()
    document.core_properties.title = core_title
    document.add_paragraph("Quarterly Plan", style="Title")
    document.add_heading("Goals", level=1)
    document.add_paragraph("We will ship the new search engine in May 2024.")
    document.add_paragraph("first bullet", style="List Bullet")
    document.add_paragraph("second bullet", style="List Bullet")
    document.add_heading("Budget", level=2)
    table = document.add_table(rows=3, cols=2)
    for i, (item, cost) in enumerate([("Item", "Cost"), ("Servers", "1000"), ("Staff", "5000")]):
        table.cell(i, 0).text = item
        table.cell(i, 1).text = cost
    document.add_heading("Risks", level=1)
    document.add_paragraph("中文内容：风险很低。")
    document.save(str(path))
    return path


def test_docx_headings_tables_and_lists(tmp_path: Path) -> None:
    doc = load_one(make_docx(tmp_path / "plan.docx"))
    assert doc.title == "Quarterly Plan"  # from the Title-styled paragraph
    assert [(b.text, b.heading_path) for b in doc.blocks] == [
        ("We will ship the new search engine in May 2024.", ("Quarterly Plan", "Goals")),
        ("- first bullet\n- second bullet", ("Quarterly Plan", "Goals")),
        ("Item | Cost\nServers | 1000\nStaff | 5000", ("Quarterly Plan", "Goals", "Budget")),
        ("中文内容：风险很低。", ("Quarterly Plan", "Risks")),
    ]


def test_docx_core_title_wins(tmp_path: Path) -> None:
    assert load_one(make_docx(tmp_path / "plan.docx", core_title="Plan 2024 (final)")).title == "Plan 2024 (final)"


def test_corrupt_docx(tmp_path: Path) -> None:
    good = make_docx(tmp_path / "good.docx").read_bytes()
    truncated = tmp_path / "truncated.docx"
    truncated.write_bytes(good[: len(good) // 2])
    assert load_error(truncated).reason.startswith("corrupt DOCX")

    broken_xml = tmp_path / "broken-xml.docx"
    buffer = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(good)) as src, zipfile.ZipFile(buffer, "w") as dst:
        for item in src.infolist():
            data = b"<w:document><unclosed" if item.filename == "word/document.xml" else src.read(item)
            dst.writestr(item, data)
    broken_xml.write_bytes(buffer.getvalue())
    assert load_error(broken_xml).reason.startswith("corrupt DOCX: ")

    legacy = tmp_path / "old.docx"
    legacy.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 512)
    assert load_error(legacy).reason == "not a DOCX (legacy Word .doc format; save it as .docx)"

    other_zip = tmp_path / "archive.docx"
    with zipfile.ZipFile(other_zip, "w") as archive:
        archive.writestr("readme.txt", "hello")
    assert load_error(other_zip).reason == "not a DOCX (zip archive without word/document.xml)"


# ---------------------------------------------------------------------------------------------- JSONL corpus


def test_jsonl_corpus_records_are_documents(tmp_path: Path) -> None:
    records = [
        {"_id": "d1", "title": "Paris", "text": "Paris is the capital of France.\n\nIt has 2 million people."},
        {"_id": "d2", "title": "北京", "text": "北京是中国的首都。", "lang": "zh", "rank": 3},
    ]
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n\n", encoding="utf-8")
    docs = load_path(path, LIMIT)
    assert [(d.doc_id, d.source, d.title) for d in docs] == [
        ("d1", f"{path}#d1", "Paris"),
        ("d2", f"{path}#d2", "北京"),
    ]
    assert texts(docs[0]) == ["Paris is the capital of France.", "It has 2 million people."]
    assert docs[1].meta == {"lang": "zh"}  # string-valued extras only


def test_jsonl_windows_newlines_and_title_only_records(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    lines = [
        json.dumps({"_id": 1, "title": "Numbers", "text": "First part.\r\n\r\nSecond part."}),
        json.dumps({"_id": "t", "title": "Only a title", "text": ""}),
    ]
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode("utf-8"))
    first, second = load_path(path, LIMIT)
    assert first.doc_id == "1"  # numeric ids are accepted as their string form
    assert texts(first) == ["First part.", "Second part."]
    assert texts(second) == ["Only a title"]  # still findable by its title


def test_jsonl_record_without_any_text(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_text('{"_id": "a", "title": "A", "text": "alpha"}\n{"_id": "b", "title": " ", "text": ""}\n')
    assert load_error(path).reason == "line 2: record 'b' has no text"


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ('{"_id": "x", "title": "T", "text": "broken', "line 3: invalid JSON"),
        ('{"_id": "x", "title": "T"}', "line 3: missing field 'text'"),
        ('{"title": "T", "text": "t"}', "line 3: missing field '_id'"),
        ('["not", "an", "object"]', "line 3: expected a JSON object, got list"),
        ('{"_id": "a", "title": "dup", "text": "again"}', "line 3: duplicate _id 'a' (first on line 1)"),
    ],
)
def test_jsonl_bad_line_is_named(tmp_path: Path, line: str, reason: str) -> None:
    path = tmp_path / "corpus.jsonl"
    good = ['{"_id": "a", "title": "A", "text": "alpha"}', '{"_id": "b", "title": "B", "text": "beta"}']
    path.write_text("\n".join([*good, line, '{"_id": "c", "title": "C", "text": "gamma"}']) + "\n")
    error = load_error(path)
    assert error.reason.startswith(reason)
    assert str(error).startswith(f"{path}: line 3: ")


def test_jsonl_five_thousand_records_all_load_in_order(tmp_path: Path) -> None:
    # How fast is measured by the ingest benchmarks, not here (a timed test fails on a busy machine).
    path = tmp_path / "big.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for i in range(5000):
            text = f"Passage {i} talks about topic {i % 97} in some detail. " * 8
            out.write(json.dumps({"_id": f"doc-{i}", "title": f"Title {i}", "text": text}) + "\n")
    docs = load_path(path, LIMIT)
    assert [d.doc_id for d in docs] == [f"doc-{i}" for i in range(5000)]
    assert docs[-1].title == "Title 4999"


# ---------------------------------------------------------------------------------------------- dispatcher


def test_supported_suffixes_cover_every_format() -> None:
    assert set(SUPPORTED_SUFFIXES) == {".txt", ".md", ".markdown", ".html", ".htm", ".pdf", ".docx", ".jsonl"}


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.txt"
    path.write_bytes(b"")
    assert str(load_error(path)) == f"{path}: empty file"


def test_binary_files_named_txt(tmp_path: Path) -> None:
    png = tmp_path / "photo.txt"
    png.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4)
    error = load_error(png)
    assert error.reason.startswith("binary file (not text)")
    assert "PNG" in error.reason

    noise = tmp_path / "noise.txt"
    rnd = random.Random(7)
    noise.write_bytes(bytes(rnd.randrange(256) for _ in range(5000)))
    assert load_error(noise).reason == "binary file (not text)"


def test_oversized_file_is_refused_before_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "huge.txt"
    path.write_bytes(b"a" * (2 * 1024 * 1024 + 200 * 1024))

    def no_reading(*args: object, **kwargs: object) -> None:
        raise AssertionError("the file was opened")

    monkeypatch.setattr(Path, "open", no_reading)
    error = load_error(path, max_bytes=1024 * 1024)
    assert error.reason == "file too large: 2.2 MB > limit 1 MB"


def test_oversized_small_limit_reads_well(tmp_path: Path) -> None:
    path = tmp_path / "small.txt"
    path.write_bytes(b"a" * 3000)
    assert load_error(path, max_bytes=1024).reason == "file too large: 2.9 KB > limit 1 KB"


def test_unsupported_suffix(tmp_path: Path) -> None:
    path = tmp_path / "data.xyz"
    path.write_text("hello")
    assert load_error(path).reason == (
        "unsupported file type '.xyz' (supported: .txt, .md, .markdown, .html, .htm, .pdf, .docx, .jsonl)"
    )


def test_missing_file_and_folder(tmp_path: Path) -> None:
    assert load_error(tmp_path / "gone.md").reason == "no such file"
    folder = tmp_path / "folder.md"
    folder.mkdir()
    assert load_error(folder).reason == "is a folder, not a file"


def test_suffix_is_case_insensitive(tmp_path: Path) -> None:
    path = tmp_path / "README.MD"
    path.write_text("# Read me\n\nHello.\n")
    doc = load_one(path)
    assert doc.title == "Read me"
    assert doc.blocks[0].heading_path == ("Read me",)
