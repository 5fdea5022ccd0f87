"""Model-free answers that are what a passage is about, comparisons read from the property asked about, and what
two things have in common."""

from __future__ import annotations

from pathlib import Path

from agentrag.agent.question import analyze
from agentrag.agent.subject import is_what_was_asked
from agentrag.embed.base import Embedder
from agentrag.kb import KnowledgeBase
from agentrag.settings import Settings
from agentrag.vocab import Mode
from tests.agent.test_bridges import _ask
from tests.helpers import write


def test_across_a_bridge_the_bridge_is_not_the_answer(settings: Settings, embedder: Embedder, tmp_path: Path) -> None:
    """The festival's own passage names the festival again and calls its island "Bahamian": the place is Great
    Exuma, neither the festival nor the adjective."""
    docs = {
        "mcfarland.md": "# Billy McFarland\n\nBilly McFarland is an American entrepreneur. He was charged with wire "
        "fraud in Manhattan federal court over the organization of the Fyre Festival.\n",
        "fyre.md": "# Fyre Festival\n\nThe Fyre Festival was a music festival scheduled to take place on the "
        "Bahamian island of Great Exuma over two weekends in April and May 2017.\n",
    }
    (answer,) = _ask(
        settings,
        embedder,
        tmp_path,
        docs,
        "Where was the music festival Billy McFarland was charged with wire fraud for supposed to take place?",
    )
    assert answer.short_answer == "Great Exuma"


def test_the_subject_of_a_page_that_fits_the_description(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """The page whose subject is what was asked for and fits the description answers, though the club is only named
    on another player's page: given as the answer, at low confidence, not as "not found" or a birthplace."""
    docs = {
        "lopez.md": "# Claudio López (footballer)\n\nClaudio Javier López (born 17 July 1974) is a retired "
        "Argentine footballer who played as a forward.\n",
        "valencia.md": "# José Daniel Valencia\n\nJosé Daniel Valencia (born 3 October 1955 in San Salvador, Jujuy "
        "Province) is a retired Argentine footballer, who played as an attacking midfielder.\n",
        "ortuzar.md": "# Higinio Ortúzar\n\nHiginio Ortúzar Santamaria (10 January 1915 - 8 November 1982) is a "
        "retired Chilean footballer who played in Spain for Barakaldo CF, Athletic Bilbao and Valencia CF.\n",
    }
    (answer,) = _ask(
        settings,
        embedder,
        tmp_path,
        docs,
        "Which retired Argentine footballer who played as a forward was a main player for Valencia CF?",
    )
    assert answer.short_answer == "Claudio Javier López"
    assert answer.stop_reason == "answered"
    assert answer.confidence == "low"  # nothing states that he played for Valencia CF


def test_comparisons_read_the_property_asked_about(settings: Settings, embedder: Embedder, tmp_path: Path) -> None:
    """The birth year, not the year of a hit song; the year of death from a life span; millions as millions."""
    docs = {
        "keenan.md": "# Pepper Keenan\n\nPepper J. Keenan (born May 8, 1967) is an American guitarist and vocalist.\n",
        "parissi.md": '# Rob Parissi\n\nRobert "Rob" Parissi is an American singer and guitarist, known for the '
        '1976 hit "Play That Funky Music". He was born in 1950 in Mingo Junction, Ohio.\n',
        "graves.md": "# Robert Graves\n\nRobert Graves (24 July 1895 – 7 December 1985) was an English poet and "
        "novelist.\n",
        "buzzati.md": "# Dino Buzzati\n\nDino Buzzati (16 October 1906 – 28 January 1972) was an Italian novelist "
        "and journalist.\n",
        "shanghai.md": "# Shanghai\n\nShanghai is a direct-controlled municipality of China with a population of "
        "more than 24 million as of 2014.\n",
        "hanggin.md": "# Hanggin Rear Banner\n\nHanggin Rear Banner is a banner of Inner Mongolia with 300,000 "
        "inhabitants in 2004.\n",
    }
    born, died, larger = _ask(
        settings,
        embedder,
        tmp_path,
        docs,
        "Was Pepper Keenan or Rob Parissi born first?",
        "Who passed away first, Robert Graves or Dino Buzzati?",
        "Which has the larger population, Shanghai or Hanggin Rear Banner?",
    )
    assert born.short_answer == "Rob Parissi"
    assert died.short_answer == "Dino Buzzati"
    assert larger.short_answer == "Shanghai"


def test_what_two_things_have_in_common(settings: Settings, embedder: Embedder, tmp_path: Path) -> None:
    docs = {
        "gimelstob.md": "# Justin Gimelstob\n\nJustin Jeremy Gimelstob (born January 26, 1977) is a retired "
        "American tennis player. He lives in Santa Monica, California.\n",
        "kerber.md": "# Angelique Kerber\n\nAngelique Kerber (born 18 January 1988) is a German professional tennis "
        "player and former world No. 1.\n",
    }
    (answer,) = _ask(
        settings, embedder, tmp_path, docs, "What sport is played by both Justin Gimelstob and Angelique Kerber?"
    )
    assert answer.short_answer == "tennis player"
    assert answer.answer.startswith("tennis player[")


def test_the_nationality_is_the_word_that_says_it(settings: Settings, embedder: Embedder, tmp_path: Path) -> None:
    """A nationality is the word the page's opening gives its subject ("an American actor"), not a name in it; two
    things have one in common when both openings give the same word."""
    docs = {
        "holland.md": "# André Holland\n\nAndré Holland (born December 28, 1979) is an American actor, known for his "
        "roles in The Knick and Moonlight.\n",
        "42.md": "# 42 (film)\n\n42 is a 2013 American biographical sports film about baseball player Jackie "
        "Robinson, written and directed by Brian Helgeland.\n",
        "arafat.md": "# Yasser Arafat\n\nMohammed Abdel Rahman Abdel Raouf Arafat al-Qudwa al-Husseini, popularly "
        "known as Yasser Arafat or by his kunya Abu Ammar, was a Palestinian political leader.\n",
        "persona.md": "# Persona Non Grata (2003 film)\n\nPersona Non Grata is a 2003 documentary film by Oliver "
        "Stone that includes interviews with Yasser Arafat.\n",
    }
    for name, text in docs.items():
        write(tmp_path / "docs" / name, text)
    with KnowledgeBase.open("kb", settings=settings, embedder=embedder) as kb:
        kb.ingest([tmp_path / "docs"])
        # The agent compares the two sides (auto routes this short question to a single search).
        shared = kb.ask("What country of origin does André Holland and 42 have in common?", mode=Mode.AGENT)
        single = kb.ask("Persona Non Grata includes interviews by the political leader of what nationality?")
    assert shared.short_answer == "American"
    assert single.short_answer == "Palestinian"


def test_when_someone_reached_through_the_question_was_born_or_died(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """The year is read from the life span on the page of the person the song's or the event's passage names, not
    from the song's own dates."""
    docs = {
        "song.md": '# One Less Set of Footsteps\n\n"One Less Set of Footsteps" is a song written and performed by '
        "Jim Croce. It was released in 1973 on the album Life and Times.\n",
        "croce.md": "# Jim Croce\n\nJames Joseph Croce (January 10, 1943 – September 20, 1973) was an American folk "
        "and rock singer-songwriter.\n",
        "dingoes.md": "# The Dingoes\n\nThe Dingoes are an Australian country rock band. Their guitarist Chris "
        "Stockley was shot in the stomach in 1976 by the Melbourne drug dealer Dennis Allen.\n",
        "allen.md": "# Dennis Allen\n\nDennis Bruce Allen (7 November 1951 – 13 April 1987) was a Melbourne criminal "
        "and drug dealer.\n",
    }
    born, died, direct = _ask(
        settings,
        embedder,
        tmp_path,
        docs,
        '"One Less Set of Footsteps" is a song written and performed by a singer born in which year?',
        "In what year did the man who shot Chris Stockley of The Dingoes die?",
        "In what year was Jim Croce born?",
    )
    assert born.short_answer == "1943"
    assert died.short_answer == "1987"
    assert direct.short_answer == "1943"


def test_a_page_of_the_kind_asked_for_answers_with_its_subject(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """The series' own page names its creators in the same sentence: the series is the answer. A town's page says
    it lies in a county: for "what county", the county, not the town or an acronym."""
    docs = {
        "carter.md": "# Agent Carter (TV series)\n\nMarvel's Agent Carter is an American television series created "
        "for ABC by Christopher Markus & Stephen McFeely, inspired by the 2011 film Captain America.\n",
        "awards.md": "# 22nd AVN Awards\n\nThe 22nd AVN Awards ceremony took place on January 8, 2005 at the "
        "Venetian Hotel at Paradise, Nevada.\n",
        "paradise.md": "# Paradise, Nevada\n\nParadise is an unincorporated town and a census-designated place (CDP) "
        "in Clark County, Nevada, United States.\n",
    }
    series, county = _ask(
        settings,
        embedder,
        tmp_path,
        docs,
        "What ABC television series was inspired by a 2011 film and created by Christopher Markus?",
        "The 22nd AVN Awards took place in what Nevada county?",
    )
    assert series.short_answer == "Agent Carter"
    assert county.short_answer == "Clark County"


def test_chinese_spans_give_what_the_question_lacks(settings: Settings, embedder: Embedder, tmp_path: Path) -> None:
    """The clause after the one restating the question, the clause giving a cause, a range with its unit, a count
    with its classifier, and a transliterated name whole."""
    docs = {
        "lesotho.md": "# 莱索托\n\n莱索托是非洲南部的国家。莱索托没有海港，因是一个内陆国家，四面被南非包围。\n",
        "deer.md": "# 克什米尔马鹿\n\n克什米尔马鹿是马鹿的亚种。其生存受到威胁，主要是失去栖息地、过度放牧及被烹吃。\n",
        "fish.md": "# 黑褐新箭雀鲷\n\n黑褐新箭雀鲷为热带海水鱼，分布于西太平洋区，生活在水深2至23公尺的珊瑚礁海域。\n",
        "mien.md": "# 勉语\n\n勉语是瑶族使用的语言。语言学家毛宗武把国内的勉语划分为四种方言，彼此可以互通。\n",
        "solvay.md": "# 氨碱法\n\n氨碱法是一种制取纯碱的工业方法，由比利时人欧内斯特·索尔维于1861年发明，"
        "又称索尔维法。\n",
    }
    why, threat, depth, count, who = _ask(
        settings,
        embedder,
        tmp_path,
        docs,
        "莱索托为什么没有海港？",
        "克什米尔马鹿的生存会受到什么威胁？",
        "黑褐新箭雀鲷生活在水深多少的海域？",
        "毛宗武把国内的勉语划分为几种方言？",
        "氨碱法是由谁发明的？",
    )
    assert why.short_answer == "因是一个内陆国家"
    assert threat.short_answer == "主要是失去栖息地、过度放牧及被烹吃"
    assert depth.short_answer == "2至23公尺"
    assert count.short_answer == "四种"
    assert who.short_answer == "欧内斯特·索尔维"


def test_a_plural_kind_asked_for_is_the_kind_a_page_says_its_subject_is() -> None:
    """ "Which American actors ..." asks for an actor: Zero Mostel's page says he "was an American actor and
    comedian", so its subject is what was asked; a page about a film is not."""
    question = analyze("Which American actors and comedian played a New York City tailor in The Angel Levine?")
    part = question.parts[0]
    assert is_what_was_asked(part, 'Samuel Joel "Zero" Mostel (1915 – 1977) was an American actor and comedian.')
    assert not is_what_was_asked(part, "The Angel Levine is a 1970 American film directed by Jan Kadar.")


def test_the_name_after_the_kind_asked_for_is_the_answer_not_a_bridge(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """ "the British rock band Dire Straits" names the band asked for: another passage naming Dire Straits does
    not make it a bridge to that passage's other names (the record label, "Warner Bros.")."""
    docs = {
        "walk.md": '# Walk of Life\n\n"Walk of Life" is a song by the British rock band Dire Straits from their fifth '
        'studio album "Brothers in Arms" (1985).\n',
        "album.md": "# Brothers in Arms (album)\n\nBrothers in Arms is the fifth studio album by the British rock band "
        "Dire Straits, released on 13 May 1985 by Vertigo Records internationally, and by Warner Bros.\n",
    }
    question = "What British rock band released the album Brothers in Arms in 1985?"
    (answer,) = _ask(settings, embedder, tmp_path, docs, question)
    assert answer.short_answer == "Dire Straits"


def test_who_is_answered_by_the_person_a_page_opens_with(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """A page that opens with a person's life and says they did what the question asks names the answer first:
    not the other person the same sentence names ("then President Simón Bolívar")."""
    docs = {
        "zea.md": "# Francisco Antonio Zea\n\nJuan Francisco Antonio Hilarión Zea Díaz (born 23 November 1766 – 28 "
        "November 1822) was a Colombian journalist, botanist, diplomat, politician, and statesman who served as the "
        "1st Vice President of Colombia under then President Simón Bolívar.\n",
        "bolivar.md": "# Simón Bolívar\n\nSimón Bolívar, known as El Libertador, was a Venezuelan military and "
        "political leader who led several South American countries to independence from the Spanish Empire.\n",
    }
    question = "Who served as the 1st Vice President of Colombia under Bolívar?"
    (answer,) = _ask(settings, embedder, tmp_path, docs, question)
    assert answer.short_answer == "Juan Francisco Antonio Hilarión Zea Díaz"


def test_a_sentence_about_he_is_answered_by_the_page_that_opens_with_him(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """ "He was nominated ... for The Heartbreak Kid" is said of the page's subject: "which actor" is answered by
    the name its opening gives, not by the other title in the sentence ("Roman Holiday")."""
    docs = {
        "albert.md": "# Eddie Albert\n\nEdward Albert Heimberger (April 22, 1906 – May 26, 2005), known professionally "
        "as Eddie Albert, was an American actor and activist. He was nominated for the Academy Award for Best "
        'Supporting Actor in 1954 for his performance in "Roman Holiday", and in 1973 for "The Heartbreak Kid".\n',
        "kid.md": "# The Heartbreak Kid\n\nThe Heartbreak Kid is a 1972 American black comedy film directed by Elaine "
        "May.\n",
    }
    question = (
        'Which actor was nominated for the Academy Award for Best Supporting Actor in 1973 for "The Heartbreak Kid"?'
    )
    (answer,) = _ask(settings, embedder, tmp_path, docs, question)
    assert answer.short_answer == "Edward Albert Heimberger"


def test_two_names_that_describe_one_answer_are_not_answered_side_by_side(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """ "What actor appeared in A and was nominated for B?" asks for one actor: searched side by side, the sides'
    answers disagree, so the question is answered whole, not as "A's answer; B's answer"."""
    docs = {
        "byzantium.md": "# Evening in Byzantium\n\nEvening in Byzantium is a 1978 made-for-television film directed by "
        "Jerry London. It stars Glenn Ford, Eddie Albert and Vince Edwards.\n",
        "albert.md": "# Eddie Albert\n\nEdward Albert Heimberger (April 22, 1906 – May 26, 2005), known professionally "
        "as Eddie Albert, was an American actor. He was nominated for the Academy Award for Best Supporting Actor in "
        '1954 for "Roman Holiday", and in 1973 for "The Heartbreak Kid".\n',
        "kid.md": "# The Heartbreak Kid\n\nThe Heartbreak Kid is a 1972 American black comedy film directed by Elaine "
        "May, starring Charles Grodin and Cybill Shepherd.\n",
    }
    question = (
        'What actor appeared in "Evening in Byzantium" and was nominated for the Academy Award for Best Supporting '
        'Actor in 1973 for "The Heartbreak Kid"?'
    )
    (answer,) = _ask(settings, embedder, tmp_path, docs, question)
    assert answer.short_answer is not None
    assert "Albert" in answer.short_answer
    assert ";" not in answer.short_answer
