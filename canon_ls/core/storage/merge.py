"""§6 write as a function: the article file as it is on disk plus the request in; the outcome, the
new bytes and the mode out."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from canon_ls.core.checking import lint
from canon_ls.core.checking import schema as sch
from canon_ls.core.storage import article as art
from canon_ls.core.storage import clock
from canon_ls.core.storage.article import Article
from canon_ls.core.storage.front_write import render


class BadInput(ValueError):
    """A request the store cannot act on; the message is one sentence saying what to do."""


@dataclass
class WriteOutcome:
    address: str
    status: str  # 'written' | 'created' | 'unchanged' | 'refused'
    lines: list[str] = field(default_factory=list)  # lint/schema lines, already sentences


@dataclass(frozen=True)
class Request:
    """What a write names: absent or empty fields mean "unchanged" (SPEC §6)."""

    capsule: str | None
    body: str | None
    scope: str | None
    capsule_given: bool
    body_given: bool


def merge(
    address: str,
    prev_data: tuple[bytes, bool, int] | None,
    request: Request,
    schema: sch.Schema,
    *,
    exists: Callable[[str], bool],
    orphan: Callable[[str, str], bool],
    governs: Callable[[str], bool] | None = None,
    maps: Callable[[str], bool],
) -> tuple[WriteOutcome, bytes | None, int]:
    """§6 write, §7 judgement, §6.1 lints over the previous file as read under the store lock:
    the outcome, the new bytes (None: refused or unchanged) and the file mode to keep."""
    capsule, body, scope = request.capsule, request.body, request.scope
    capsule_given, body_given = request.capsule_given, request.body_given
    notes: list[str] = []
    pasted = art.without_pasted(body) if body_given and body else None
    if pasted is not None:  # its owned values count only where the call gave none
        body, meta = pasted
        body_given = bool(body.strip())
        kept = [k for k in ("capsule", "scope") if isinstance(v := meta.get(k), str) and v.strip()]
        kept = [k for k in kept if (k != "scope" or meta[k] == "rule")]
        kept = [k for k in kept if not (capsule_given if k == "capsule" else scope)]
        if "capsule" in kept:
            capsule, capsule_given = str(meta["capsule"]), True
        if "scope" in kept:
            scope = str(meta["scope"])
        notes.append(f"{art.PASTED}" + (f" (its {' and '.join(kept)} kept)." if kept else "."))
    prev_text: str | None = None
    prev: Article | None = None
    mode = 0o644
    if prev_data is not None:
        data, truncated, mode = prev_data
        prev = art.parse(data, address)
        if truncated or any(p.startswith(("binary", "not UTF-8")) for p in prev.problems):
            if not body_given:
                raise BadInput(
                    f"The article file for {address} is not readable text (binary, not "
                    "UTF-8 or too large); fix it by hand or write a full body to replace it."
                )
        else:
            prev_text = data.decode("utf-8")
    if prev is None and not capsule_given and not body_given and scope != "rule":
        raise BadInput(f"Nothing to write for {address}: give a capsule, a body, or both.")
    old_capsule = prev.capsule if prev else ""
    old_body = prev.body if prev else ""
    old_scope = prev.scope if prev else "asset"
    new_capsule = art.one_line(capsule).strip() if capsule_given and capsule else old_capsule
    new_body = old_body
    if body_given and body:
        candidate = body if body.endswith("\n") else body + "\n"
        if prev is None or candidate.rstrip("\n") != old_body.rstrip("\n"):
            new_body = candidate
    new_scope = scope or old_scope
    capsule_changed = new_capsule != old_capsule
    body_changed = new_body != old_body
    scope_changed = new_scope != old_scope
    tail = [schema.malformed_line] if schema.error else list(schema.notes)
    nothing = not (capsule_changed or body_changed or scope_changed)
    if prev is not None and prev_text is not None and nothing:
        return WriteOutcome(address, "unchanged", notes + tail), None, mode
    created = prev is None
    new_title = art.title_of(new_body)
    changed = set()
    if capsule_changed:
        changed.add("capsule")
    if body_changed:
        changed |= {"body", "title"}  # a body rewrite rewrites the title (§7)
    refs_changed = body_changed and sch.references(new_body) != sch.references(old_body)
    # Sizes are judged on the body as the caller sent it (pi-canon's measure, so both tools
    # draw their lines at the same character), else on the stored one.
    sized = body if body_given and body else new_body
    judgement = sch.judge(
        schema,
        created=created,
        changed=changed,
        values={"capsule": new_capsule, "title": new_title, "body": sized},
        refs_changed=refs_changed,
    )
    if judgement.refusals:
        return WriteOutcome(address, "refused", judgement.refusals), None, mode
    text = render(  # a line the write does not change stays as it is (it may be unreadable)
        prev_text,
        capsule=new_capsule if new_capsule or capsule_changed else None,
        updated=clock.today(),
        scope=new_scope if new_scope == "rule" or scope_changed else None,
        body=new_body,
    )
    lines = notes + judgement.warnings
    lines += lint.write_lints(
        address,
        capsule=new_capsule,
        body=new_body,
        previous=prev,
        capsule_given=capsule_changed,
        body_given=body_changed,
        exists=exists,
        orphan=orphan(address, new_scope),
        schema=schema,
        chars=len(sized),
        scope=new_scope,
        governs=governs,
        asset=maps(address),
    )
    status = "created" if created else "written"
    return WriteOutcome(address, status, lines + tail), text.encode("utf-8"), mode
