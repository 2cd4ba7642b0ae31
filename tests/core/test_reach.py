"""core/reach.py: the globs of `applies` as the agents write them (docs/FORMAT.md, "Front
matter keys"; SPEC §11.3 "An article may apply beyond its own address")."""

from __future__ import annotations

from canon_ls.core.reach import applies_to, reach_of


def _applies(globs: list[str], path: str) -> bool:
    rule = reach_of({"applies": globs})
    assert rule is not None
    return applies_to(rule, path)


def test_globs_match_as_the_hosts_read_them() -> None:
    assert _applies(["src/Pkg*/README.md"], "src/PkgA/README.md")
    assert not _applies(["src/Pkg*/README.md"], "src/PkgA/a.cs")  # not every file of src
    assert _applies(["**/*.{ts,tsx}"], "a/b/c.tsx") and _applies(["*.ts"], "deep/x.ts")
    assert _applies(["docs"], "docs/a/b.md") and not _applies(["docs"], "docsx")
    assert _applies(["app/\\[slug\\]/**"], "app/[slug]/page.tsx")
    assert not _applies(["lib/**", "!lib/gen/**"], "lib/gen/x.py")
    assert _applies(["a/[!b]c"], "a/xc") and not _applies(["a/[!b]c"], "a/bc")


def test_a_malformed_glob_never_raises() -> None:
    for glob in ("{a,b", "[!]", "[a\\]", "[", "a}", "(x)"):
        rule = reach_of({"applies": [glob]})
        assert rule is not None and applies_to(rule, "a/b") in (True, False)
    assert reach_of({"always": "true"}) is not None and reach_of({"applies": []}) is None
