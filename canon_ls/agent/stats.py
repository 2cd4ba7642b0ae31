"""What the memory cost the agent's context: running totals kept by the hooks, and `canon stats`."""

from __future__ import annotations

import os
import time
from typing import Any

MAX_KEYS = 400  # files or articles kept per session (the rest are summed, not named)
MAX_NEAR = 20  # near misses kept per session, newest last


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _num(value: object) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def _add(table: dict[str, Any], key: str, n: int) -> None:
    if key in table or len(table) < MAX_KEYS:
        table[key] = _int(table.get(key)) + n


def _table(stats: dict[str, Any], key: str) -> dict[str, Any]:
    value = stats.get(key)
    if not isinstance(value, dict):
        value = stats[key] = {}
    return value


def delivered(stats: dict[str, Any], text: str) -> None:
    """Count one reply's text as put in the agent's context (headers included)."""
    if text:
        _add(stats, "chars", len(text))
        _add(stats, "messages", 1)


def account(stats: dict[str, Any], agent: str, session: str, decisions: list[dict]) -> None:
    """Add one event's decisions to a session's running totals (in place)."""
    now = time.strftime("%Y-%m-%dT%H:%M:%S")
    stats["agent"], stats["session"] = agent, session
    stats.setdefault("first", now)
    stats["last"] = now
    for d in decisions:
        kind = d.get("decision")
        chars = _int(d.get("chars"))
        address = d.get("governing") if isinstance(d.get("governing"), str) else ""
        if kind in ("surfaced", "ranked"):
            lane = kind == "ranked"
            _add(stats, "rank" if lane else "spine", 1)
            _add(stats, "chars_rank" if lane else "chars_spine", chars)
            if address:
                _add(_table(stats, "by_rank" if lane else "by_spine"), address, 1)
            touched = d.get("file")
            if not lane and isinstance(touched, str) and touched:
                _add(_table(stats, "files"), touched, chars)
        elif kind == "captured" and not d.get("repeat"):
            _add(stats, "captures", 1)
            _add(stats, "chars_capture", chars)
        elif kind == "remind":
            _add(stats, "reminders", 1)
            _add(stats, "chars_remind", chars)
        kept, sent = _num(d.get("best_kept")), _num(d.get("worst_sent"))
        if kind == "ranking" or kept is not None or sent is not None:
            lane_stats = _table(stats, "lane")
            _add(lane_stats, "rankings", 1)
            if kept is not None:
                best = _num(lane_stats.get("best_kept"))
                lane_stats["best_kept"] = kept if best is None else max(best, kept)
            if sent is not None:
                worst = _num(lane_stats.get("worst_sent"))
                lane_stats["worst_sent"] = sent if worst is None else min(worst, sent)
            if kept is not None and sent is None and kept > 0:
                near = lane_stats.setdefault("near", [])
                if isinstance(near, list):
                    name = d.get("near_miss") or d.get("kept") or ""
                    near.append({"address": name if isinstance(name, str) else "", "score": kept})
                    del near[:-MAX_NEAR]


def _merge(tables: list[object]) -> dict[str, int]:
    total: dict[str, int] = {}
    for table in tables:
        if isinstance(table, dict):
            for key, n in table.items():
                total[key] = total.get(key, 0) + _int(n)
    return dict(sorted(total.items(), key=lambda kv: (-kv[1], kv[0])))


def report(project: str) -> dict[str, Any]:
    """The `canon stats --format json` object for one project."""
    from canon_ls.agent.session import state_dir, states

    mine = os.path.realpath(project)
    ours = [s.stats for _stem, s in states() if s.project and os.path.realpath(s.project) == mine]
    sessions = sorted((s for s in ours if s.get("last")), key=lambda s: str(s.get("last")))
    keys = ("spine", "rank", "captures", "reminders", "messages", "chars", "chars_spine",
            "chars_rank", "chars_capture", "chars_remind")  # fmt: skip
    totals = {k: sum(_int(s.get(k)) for s in sessions) for k in keys}
    lanes = [s["lane"] for s in sessions if isinstance(s.get("lane"), dict)]
    kept = [x for x in (_num(lane.get("best_kept")) for lane in lanes) if x is not None]
    sent = [x for x in (_num(lane.get("worst_sent")) for lane in lanes) if x is not None]
    near = [n for lane in lanes for n in lane.get("near", []) if isinstance(n, dict)]
    return {
        "project": project,
        "state": str(state_dir()),
        "totals": {"sessions": len(sessions), **totals},
        "sessions": [
            {
                "agent": str(s.get("agent", "")),
                "session": str(s.get("session", "")),
                "first": str(s.get("first", "")),
                "last": str(s.get("last", "")),
                **{k: _int(s.get(k)) for k in keys},
            }
            for s in sessions
        ],
        "files": _merge([s.get("files") for s in sessions]),
        "by_spine": _merge([s.get("by_spine") for s in sessions]),
        "by_rank": _merge([s.get("by_rank") for s in sessions]),
        "lane": {
            "rankings": sum(_int(lane.get("rankings")) for lane in lanes),
            "best_kept": max(kept) if kept else None,
            "worst_sent": min(sent) if sent else None,
            "near_misses": near[-MAX_NEAR:],
        },
    }


def render(data: dict[str, Any], top: int = 10) -> str:
    """`canon stats` as text: totals, then per session, per file, per article, the lane."""
    t = data["totals"]
    if not t["sessions"]:
        return (
            "No agent session has used canon's hooks in this project in the last two weeks, so "
            f"there is nothing to report yet (the hooks keep their totals in {data['state']})."
        )
    n = t["sessions"]
    parts = ("chars_spine", "chars_rank", "chars_capture", "chars_remind")
    framing = max(0, t["chars"] - sum(t[k] for k in parts))
    lines = [
        f"{n} agent session{'s' if n != 1 else ''} in {data['project']} put "
        f"{t['chars']:,} characters of memory in the agent's context "
        f"({_count(t['messages'], 'reply', 'replies')}):",
        f"  by address: {_count(t['spine'], 'article')}, {t['chars_spine']:,} characters",
        f"  by rank:    {_count(t['rank'], 'article')}, {t['chars_rank']:,} characters",
        f"  captures:   {_count(t['captures'], 'note')}, {t['chars_capture']:,} characters",
        f"  reminders:  {_count(t['reminders'], 'reminder')}, {t['chars_remind']:,} characters",
        f"  headers:    {framing:,} characters",
        "",
        "Per session (newest last):",
    ]
    lines += [
        f"  {s['last'][:16].replace('T', ' ')}  {s['agent']} {s['session'][:12]}: "
        f"{s['chars']:,} characters, {s['spine']} by address, {s['rank']} by rank, "
        f"{s['captures']} captured"
        for s in data["sessions"][-top:]
    ]
    for title, table, unit in (
        ("Characters per touched file", data["files"], ""),
        ("Surfaced by address", data["by_spine"], "×"),
        ("Surfaced by rank", data["by_rank"], "×"),
    ):
        if table:
            lines += ["", f"{title} (top {min(top, len(table))} of {len(table)}):"]
            lines += [f"  {value:>7,}{unit}  {key}" for key, value in list(table.items())[:top]]
    lane = data["lane"]
    if lane["rankings"]:
        lines += ["", f"Retrieval lane: {_count(lane['rankings'], 'ranking')}"]
        if lane["worst_sent"] is not None:
            lines.append(f"  weakest score sent: {lane['worst_sent']:.2f}")
        if lane["best_kept"] is not None:
            lines.append(f"  strongest score held back: {lane['best_kept']:.2f}")
        near = lane["near_misses"]
        lines.append(f"  near misses (held back, nothing sent): {len(near)}")
        lines += [f"    {m.get('score', 0):.2f}  {m.get('address') or '?'}" for m in near[-5:]]
    return "\n".join(lines)


def _count(n: int, word: str, words: str = "") -> str:
    return f"{n} {word if n == 1 else (words or word + 's')}"
