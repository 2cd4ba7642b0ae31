"""SPEC §10 references: the store's inverse wikilink index answers exactly like a full scan,
and stays exact through writes, external edits, deletes, renames and a stepwise build."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from canon_ls.core.retrieval.links import wikilinks
from canon_ls.core.storage.project import open_store
from canon_ls.core.storage.store import Store


def scan(store: Store, address: str) -> list[str]:
    """The brute-force answer (what `Store.backlinks` computed before the index)."""
    found = []
    for key in store.addresses():  # mount articles are 'name:address' keys
        article = store.article(key)
        assert article is not None
        if key != address and any(link.target == address for link in wikilinks(article.body)):
            found.append(key)
    return found


def put(project: Path, address: str, body: str) -> Path:
    p = project / ".canon/articles" / (address + ".md")
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(f"---\ncapsule: {address}.\n---\n{body}")
    return p


def every_target(store: Store) -> set[str]:
    targets = {link.target for a in store.articles() for link in wikilinks(a.body)}
    return targets | set(store.addresses()) | {"nowhere"}


def assert_exact(store: Store) -> None:
    for address in every_target(store):
        assert store.backlinks(address) == scan(store, address), address


def test_spec_10_backlinks_sorted_without_self_or_code(store: Store, project: Path) -> None:
    """SPEC §10 references: linking articles, sorted; self-links and links in code ignored."""
    put(project, "z", "[[b]]\n")
    put(project, "a", "See [[b]] and [[b|again]] and [[b#part]].\n")
    put(project, "c", "`[[b]]` is code.\n```\n[[b]]\n```\n")
    put(project, "b", "I am [[b]] and link [[a]].\n")
    assert store.backlinks("b") == ["a", "z"]
    assert store.backlinks("a") == ["b"]
    assert store.backlinks("missing") == []
    assert_exact(store)


def test_spec_10_index_follows_writes(store: Store, project: Path) -> None:
    """A write that adds, changes or drops a link updates the answer at once."""
    store.write("a", capsule="A.", body="Links [[b]].")
    store.write("b", capsule="B.")
    assert store.backlinks("b") == ["a"]  # index built here
    store.write("c", capsule="C.", body="Also [[b]] and [[a]].")
    assert store.backlinks("b") == ["a", "c"]
    assert store.backlinks("a") == ["c"]
    store.write("a", body="Now [[c]] only.")
    assert store.backlinks("b") == ["c"]
    assert store.backlinks("c") == ["a"]
    assert_exact(store)


def test_spec_10_index_follows_external_edits_deletes_and_renames(
    store: Store, project: Path
) -> None:
    """SPEC §10 external changes: an agent's or a hand edit seen by reload_file or refresh."""
    a = put(project, "a", "[[t]]\n")
    put(project, "t", "target\n")
    assert store.backlinks("t") == ["a"]
    b = put(project, "dir/b", "[[t]] [[a]]\n")
    assert store.reload_file(b) == {"dir/b"}
    assert store.backlinks("t") == ["a", "dir/b"]
    a.write_text("---\ncapsule: a.\n---\nno links now\n")
    store.reload_file(a)
    assert store.backlinks("t") == ["dir/b"]
    moved = project / ".canon/articles/dir/renamed.md"
    b.rename(moved)  # a rename: one address vanishes, one appears
    assert store.refresh() == {"dir/b", "dir/renamed"}
    assert store.backlinks("t") == ["dir/renamed"]
    assert store.backlinks("a") == ["dir/renamed"]
    moved.unlink()
    assert store.reload_file(moved) == {"dir/renamed"}
    assert store.backlinks("t") == []
    assert_exact(store)


def test_spec_8_mount_articles_link_like_before(project: Path, tmp_path: Path) -> None:
    """SPEC §8: a mount's articles are sources under their 'name:' address, as the scan had it."""
    lake = tmp_path / "lake"
    put(lake, "prices", "see [[src/a]]\n")
    put(project, "src/a", "[[lake:prices]]\n")
    store = open_store(project, {"mounts": [str(lake)]})
    assert store.backlinks("src/a") == ["lake:prices"]
    assert store.backlinks("lake:prices") == ["src/a"]
    put(lake, "more", "[[src/a]]\n")
    store.refresh()
    assert store.backlinks("src/a") == ["lake:more", "lake:prices"]
    assert_exact(store)


def test_build_backlinks_in_steps_while_articles_change(store: Store, project: Path) -> None:
    """The stepwise build yields between chunks; edits between steps are never lost."""
    for i in range(30):
        put(project, f"n{i:02}", f"[[n{(i + 1) % 30:02}]] [[hub]]\n")
    store.refresh()
    steps = store.build_backlinks(step=7)
    left = [next(steps), next(steps)]
    assert left == [23, 16]
    store.write("n29", body="[[hub]] only")  # already indexed or still pending: either way
    store.write("n00", body="nothing")
    put(project, "late", "[[hub]]\n")
    store.refresh()
    assert sum(1 for _ in steps) >= 1  # the rest of the build
    assert store.backlinks("n00") == []
    assert store.backlinks("hub") == sorted([f"n{i:02}" for i in range(1, 30)] + ["late"])
    assert_exact(store)
    assert list(store.build_backlinks()) == []  # built: nothing left to do


def test_abandoned_stepwise_build_is_finished_on_demand(store: Store, project: Path) -> None:
    for i in range(10):
        put(project, f"s{i}", "[[t]]\n")
    steps = store.build_backlinks(step=3)
    next(steps)
    del steps
    assert store.backlinks("t") == [f"s{i}" for i in range(10)]


ADDRS = ["a", "b", "c/d", "c", "lake"]
op = st.one_of(
    st.tuples(
        st.just("write"), st.sampled_from(ADDRS), st.lists(st.sampled_from(ADDRS), max_size=3)
    ),
    st.tuples(
        st.just("edit"), st.sampled_from(ADDRS), st.lists(st.sampled_from(ADDRS), max_size=3)
    ),
    st.tuples(st.just("delete"), st.sampled_from(ADDRS), st.just([])),
    st.tuples(st.just("ask"), st.sampled_from(ADDRS), st.just([])),
    st.tuples(st.just("step"), st.sampled_from(ADDRS), st.just([])),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(op, max_size=14))
def test_index_equals_scan_after_any_history(ops: list[tuple[str, str, list[str]]]) -> None:
    """Property: after any mix of tool writes, hand edits, deletes and (partial) builds, every
    answer equals the brute-force scan."""
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        store = Store(project)
        steps = None
        for kind, address, links in ops:
            body = " ".join(f"[[{t}]]" for t in links) or "plain"
            if kind == "write":
                store.write(address, capsule="C.", body=body)
            elif kind == "edit":
                p = put(project, address, body + "\n")
                store.reload_file(p)
            elif kind == "delete":
                p = project / ".canon/articles" / f"{address}.md"
                if p.exists():
                    os.unlink(p)
                store.refresh()
            elif kind == "ask":
                assert store.backlinks(address) == scan(store, address)
            else:
                steps = steps or store.build_backlinks(step=1)
                next(steps, None)
        assert_exact(store)


def test_building_the_index_keeps_no_links_on_the_articles(tmp_path: Path):
    """Issue 15: the index reads each article's links once and keeps only the targets; the
    articles do not keep their parsed Link lists (most of the index's memory when they did)."""
    project = tmp_path / "proj"
    put(project, "a", "See [[b]] and [[c|the c]].")
    put(project, "b", "Back to [[a]].")
    put(project, "c", "No links.")
    store = open_store(project)
    assert store.backlinks("a") == ["b"]
    assert store.backlinks("c") == ["a"]
    for address in store.addresses():
        article = store.article(address)
        assert article is not None and not hasattr(article, "__dict__")  # nothing cached on it
        assert article.held is None  # no body either: read from the file when asked
    assert store.article("a").targets == ("b", "c")  # type: ignore[union-attr]


def test_the_index_shares_each_articles_targets_instead_of_copying_them(tmp_path: Path) -> None:
    """Issue 40 item 3 (the server's memory at 50k articles): the index's source -> targets side
    is the tuple each article already keeps, not a set copied from it (9 MB at 50k articles);
    only the target -> sources side is new memory. 300 articles of three links each cost 477
    bytes an article to index with the copies, 261 without them."""
    import tracemalloc

    project = tmp_path / "proj"
    n = 300
    for i in range(n):
        put(project, f"a{i}", f"See [[a{(i + 1) % n}]], [[a{(i + 2) % n}]], [[a{(i + 7) % n}]].")
    store = open_store(project)
    store.addresses()  # loaded before the measure: only the index's own memory is traced
    tracemalloc.start()
    try:
        assert store.backlinks("a1") == ["a0", "a294", "a299"]
        per_article = tracemalloc.get_traced_memory()[0] / n
    finally:
        tracemalloc.stop()
    assert per_article < 360, f"{per_article:.0f} bytes an article"
    assert store.backlinks("a7") == ["a0", "a5", "a6"]
