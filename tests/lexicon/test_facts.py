from __future__ import annotations

import gzip

from pictorank.lexicon.facts import default_facts, facts_of, read_facts, stems_of


def test_stems_drop_function_words_and_meet_inflections():
    assert stems_of("precipitation falling from clouds in the form of ice crystals") == stems_of(
        "precipitation fall cloud form ice crystal")
    assert "of" not in stems_of("a piece of furniture") and "piec" in stems_of("a piece of furniture")
    assert stems_of("odd-toed ungulate") == stems_of("odd toed ungulate")


def test_a_table_is_read_with_its_glosses(tmp_path):
    path = tmp_path / "facts.tsv.gz"
    path.write_bytes(gzip.compress(b"zebra\t1\t0\t0\t0\tequine animal\nquickly\t0\t0\t0\t1\t\n"))
    table = read_facts(path, {"zebra": "African wild horse with stripes"})
    assert table["zebra"].senses == (1, 0, 0, 0)
    assert stems_of("animal") <= table["zebra"].kinds and stems_of("horse") <= table["zebra"].defined_by
    assert table["quickly"].kinds == frozenset() and table["quickly"].defined_by == frozenset()
    assert facts_of("Zebra", table) is table["zebra"] and facts_of("okapi", table) is None


def test_the_vendored_table_knows_the_lexicon_s_everyday_words():
    table = default_facts()
    assert len(table) >= 50_000
    assert stems_of("animal") <= table["zebra"].kinds
    assert stems_of("falling") <= table["snow"].defined_by
    assert table["run"].senses[1] > table["run"].senses[2] == 0  # a verb far more than an adjective
