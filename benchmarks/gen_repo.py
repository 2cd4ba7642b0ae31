#!/usr/bin/env python3
"""Generate a synthetic project with a `.canon/` store and a long git history, for benchmarks.

    python benchmarks/gen_repo.py --out benchmarks/repos/m10k --files 100000 --articles 10000

Writes `<out>/repo` (a git work tree on branch main), `<out>/manifest.json` (counts and the
ground truth: orphaned and stale addresses under SPEC §9, judged with `today` below) and
`<out>/queries.json` (English, Chinese and mixed search queries).

The history goes through one `git fast-import` stream, so 2,000 commits over 100k files take
seconds. The stream is then repacked as a clone would be (`git repack -a -d -f`, git's default
window and depth): fast-import deltas each object against its older version, so `git log`
(newest first) would rebuild long delta chains and measure 1.6-7x slower than on a cloned or
gc'd repository (the 10k history pass: 10.1 s before the repack, 1.45 s after).

Commits are stamped between 10:00 and 14:00 UTC, so "which day" is the same in every time zone
from UTC-10 to UTC+9 and the ground truth does not depend on the machine's TZ.
"""

from __future__ import annotations

import argparse
import bisect
import datetime as dt
import io
import json
import os
import random
import shutil
import subprocess
import sys
import time

TODAY = "2025-07-01"  # run checks with CANON_TODAY=TODAY so stale_after and the truth agree
FIRST_DAY = dt.date(2023, 1, 2)
LAST_DAY = dt.date(2025, 6, 27)


def _words(text: str) -> list[str]:
    return text.split()


NOUNS = _words(
    "account acl admin alert api archive asset audit auth backoff backup batch billing blob "
    "breaker bucket buffer build cache cart catalog chart checkout circuit client cluster codec "
    "compiler config consensus context cron crypto currency dashboard deadline deploy diff dns "
    "document edge embed event export extension feed file fixture follower format gateway graph "
    "grpc handler hash health hook http image import index inventory invoice job key layout "
    "leader lease ledger lexer limiter loader locale lock mail merge metrics middleware migration "
    "model monitor mutex node notify object order org parser partition patch payment pipeline "
    "plugin policy poll pool probe product profile project protocol proxy queue raft rank "
    "registry release render replica report resolver retry role router rpc runtime scheduler "
    "schema score search secret seed server session shard shipping signal snapshot socket "
    "storage stream stub supplier sync task tax team telemetry template tenant theme timeout "
    "token trace transform transport tree upload user validate vault vector vendor version view "
    "visitor walker warehouse watch webhook widget worker workspace"
)
ADJECTIVES = _words(
    "atomic async blocking cached concurrent durable eager encrypted global idempotent "
    "immutable incremental lazy legacy local paginated partial remote sharded stale streaming "
    "throttled transient versioned"
)
VERBS = _words(
    "aggregates batches caches deduplicates emits evicts flushes forwards indexes merges "
    "migrates normalizes persists rebuilds reconciles resolves retries routes schedules "
    "serializes signs streams throttles validates verifies"
)
EN_SENTENCES = (
    "The {n} {v} each {n2} before the {n3} sees it.",
    "Callers must not assume the {n} is {a}; it {v} in the background.",
    "On timeout the {n} falls back to the {a} {n2}.",
    "A {n} never outlives its {n2}; the {n3} owns both.",
    "Keep allocations out of the {n} loop, this is the {a} path.",
    "Never call the {n} from a {n2} handler because it {v} under a lock.",
    "The {n} {v} records in batches to bound memory.",
    "Configuration for the {n} comes from the {n2} registry at startup.",
    "Errors from the {n} surface through the {n2} {n3}.",
    "Changing the {n} format requires a {n2} version bump and a migration.",
    "Tests for the {n} sit beside the {n2} and use a {a} {n3} fixture.",
    "The {n2} always {v} the {n} before it is persisted.",
)
CAPSULES = (
    "{A} {n} that {v} {n2} records for the {n3}; must stay {a}.",
    "Owns the {n} {n2} lifecycle: {v} on write, never on read.",
    "Entry point for {n} {n2}; {v} requests and hands them to the {n3}.",
    "{A} {n} layer between {n2} and {n3}, free of I/O.",
    "Defines the {n} schema and {v} each {n2} before it lands.",
    "Wiring for the {n} {n2}; the rules live in the {n3}.",
)
ZH_FIXED = (
    "该模块负责刷新用户会话令牌。",
    "缓存采用写后过期策略，避免读到旧数据。",
    "对外接口必须向后兼容，不得删除字段。",
    "重试使用指数退避，最多五次。",
    "订单状态只能单向流转，不允许回退。",
    "索引在后台线程构建，不阻塞请求。",
    "配置在启动时加载一次，修改后需重启。",
    "日志中不得出现密钥或个人信息。",
    "分片键由租户编号和创建时间决定。",
    "数据库迁移脚本必须幂等，可以重复执行。",
    "消息队列保证至少一次投递。",
    "权限检查在网关完成，下游默认信任。",
    "搜索结果按相关度排序，同分按时间倒序。",
    "导出任务超过三十分钟自动取消。",
    "上传文件先写临时目录，校验后再移动。",
    "这个函数是性能热点，改动前先跑基准测试。",
    "时间统一使用协调世界时，展示时再换算。",
    "支付回调可能重复到达，必须去重。",
)
ZH_NOUNS = _words(
    "用户 订单 缓存 索引 令牌 会话 队列 分片 租户 日志 配置 权限 网关 数据库 消息 文件 任务 "
    "报表 支付 库存 发票 账户 审计 指标 告警 插件 路由 调度器 副本 快照 事务 连接池 时间戳 "
    "回调 限流器 熔断器 模板 解析器 编译器 仓库 文档 客户端 协议 签名 密钥 证书 备份 集群 节点"
)
ZH_VERBS = _words("处理 校验 缓存 转发 重试 合并 刷新 同步 序列化 持久化 压缩 加密 解析 调度 归档")
ZH_TEMPLATES = (
    "{n}模块在写入{n2}之前先{v}{n3}。",
    "注意：不要在{n}的回调里{v}{n2}，否则会死锁。",
    "{n}的{n2}由{n3}负责{v}。",
    "{n}超时后，{n2}会退回旧的{n3}。",
    "{n}按批次{v}{n2}，每批最多五百条。",
)
ZH_DIR_NAMES = _words("指南 设计 运维 接口 数据 测试 工具")
ROOTS = {
    "src": (".py", ".py", ".py", ".pyi"),
    "lib": (".ts", ".ts", ".tsx", ".js"),
    "packages": (".ts", ".tsx", ".json"),
    "services": (".go", ".go", ".yaml"),
    "internal": (".go", ".proto"),
    "apps": (".ts", ".tsx", ".css"),
    "crates": (".rs", ".rs", ".toml"),
    "tests": (".py",),
    "docs": (".md", ".md", ".rst"),
    "tools": (".py", ".sh"),
}
PEOPLE = ("Ada Byron", "Lin Wei", "Grace Hopper", "Zhang Min", "Alan Kay", "Chen Jing")


class Text:
    """Sentence makers over one seeded RNG."""

    def __init__(self, rng: random.Random) -> None:
        self.r = rng

    def fill(self, template: str) -> str:
        r = self.r
        adj = r.choice(ADJECTIVES)
        return template.format(
            n=r.choice(NOUNS),
            n2=r.choice(NOUNS),
            n3=r.choice(NOUNS),
            v=r.choice(VERBS),
            a=adj,
            A=adj.capitalize(),
        )

    def zh(self) -> str:
        r = self.r
        if r.random() < 0.5:
            return r.choice(ZH_FIXED)
        return r.choice(ZH_TEMPLATES).format(
            n=r.choice(ZH_NOUNS), n2=r.choice(ZH_NOUNS), n3=r.choice(ZH_NOUNS), v=r.choice(ZH_VERBS)
        )

    def en(self) -> str:
        return self.fill(self.r.choice(EN_SENTENCES))

    def capsule(self, lang: str) -> str:
        if lang == "zh":
            return self.zh() + self.zh()
        text = self.fill(self.r.choice(CAPSULES))
        return text + " " + self.zh() if lang == "mixed" else text

    def body(self, lang: str, title: str, links: list[str]) -> str:
        r = self.r
        paragraphs = []
        pending = list(links)
        for _ in range(r.randint(3, 9)):
            sentences = [
                self.zh() if lang == "zh" or (lang == "mixed" and r.random() < 0.4) else self.en()
                for _ in range(r.randint(2, 6))
            ]
            if pending and r.random() < 0.7:
                target = pending.pop()
                label = target.rsplit("/", 1)[-1]
                sentences.append(
                    f"See [[{target}]]." if r.random() < 0.7 else f"([[{target}|{label}]])"
                )
            paragraphs.append(("" if lang == "zh" else " ").join(sentences))
        paragraphs.extend(f"- [[{t}]]" for t in pending)
        return f"# {title}\n\n" + "\n\n".join(paragraphs) + "\n"


def address_of(path: str) -> str:
    """SPEC §3 for the clean relative paths generated here: strip one extension."""
    head, _, name = path.rpartition("/")
    stem, dot, _ = name.rpartition(".")
    if dot and stem:
        name = stem
    return f"{head}/{name}" if head else name


def make_tree(r: random.Random, n_files: int) -> list[str]:
    """File paths 2..7 segments deep, unevenly spread over directories, a few with CJK names."""
    dirs: list[tuple[str, ...]] = [(root,) for root in ROOTS]
    level = list(dirs)
    n_dirs = max(len(ROOTS) * 3, n_files // 10)
    for _depth in range(2, 7):
        if len(dirs) >= n_dirs:
            break
        grown: dict[tuple[str, ...], None] = {}
        for parent in level:
            for _ in range(r.randint(1, 6)):
                if r.random() < 0.01:
                    name = r.choice(ZH_DIR_NAMES)
                elif r.random() < 0.7:
                    name = r.choice(NOUNS)
                else:
                    name = f"{r.choice(NOUNS)}_{r.choice(NOUNS)}"
                grown[(*parent, name)] = None
        level = list(grown)
        dirs.extend(level)
    dirs = dirs[:n_dirs]
    weights = [r.paretovariate(1.3) for _ in dirs]
    seen: set[str] = set()
    files: list[str] = []
    while len(files) < n_files:
        for d in r.choices(dirs, weights, k=min(8192, 2 * (n_files - len(files)))):
            ext = r.choice(ROOTS[d[0]])
            word = r.choice(NOUNS)
            stem = word if r.random() < 0.5 else f"{word}_{r.choice(NOUNS)}"
            if d[0] == "tests":
                stem = "test_" + stem
            if r.random() < 0.005:
                stem = r.choice(ZH_NOUNS)
            path = "/".join(d) + "/" + stem + ext
            if path not in seen:
                seen.add(path)
                files.append(path)
                if len(files) == n_files:
                    break
    return files


def commit_times(r: random.Random, n: int) -> list[int]:
    """Sorted epoch seconds, one per commit, each between 10:00 and 14:00 UTC of its day."""
    start = int(
        dt.datetime(FIRST_DAY.year, FIRST_DAY.month, FIRST_DAY.day, tzinfo=dt.UTC).timestamp()
    )
    days = (LAST_DAY - FIRST_DAY).days + 1
    window = 4 * 3600
    offsets = sorted(r.randrange(days * window) for _ in range(n))
    offsets[0] = 0
    return [start + (o // window) * 86400 + 36000 + o % window for o in offsets]


def utc_day(ts: int) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).date().isoformat()


def source_text(r: random.Random, path: str, rev: int) -> bytes:
    mark = "#" if path.endswith((".py", ".pyi", ".sh", ".yaml", ".toml")) else "//"
    lines = [f"{mark} {path} r{rev}"]
    lines += [f"v_{r.choice(NOUNS)} = {r.randrange(100000)}" for _ in range(r.randint(3, 10))]
    return ("\n".join(lines) + "\n").encode()


def blob(out: io.BufferedWriter, data: bytes) -> None:
    out.write(b"data %d\n" % len(data))
    out.write(data)
    out.write(b"\n")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="output directory (replaced)")
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--articles", type=int, default=1_000)
    ap.add_argument("--commits", type=int, default=2_000)
    ap.add_argument("--journal", type=int, default=None, help="entries (default: articles / 2)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    started = time.perf_counter()
    r = random.Random(args.seed)
    text = Text(r)
    n_commits = max(3, args.commits)
    out = os.path.abspath(args.out)
    repo = os.path.join(out, "repo")
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(repo)

    # --- source history: what each commit adds, modifies, deletes -----------------------
    files = make_tree(r, args.files)
    r.shuffle(files)
    times = commit_times(r, n_commits)
    ops: list[list[tuple[str, str]]] = [[] for _ in range(n_commits)]
    added: dict[str, int] = {}
    n_initial = int(len(files) * 0.6)
    for i, path in enumerate(files):
        c = 0 if i < n_initial else r.randrange(1, n_commits)
        added[path] = c
        ops[c].append(("M", path))
    cumulative: list[float] = []
    total = 0.0
    for rank in range(len(files)):  # Zipf-ish: a few hot files take most edits
        total += 1.0 / (rank + 1) ** 0.9
        cumulative.append(total)
    for c in range(1, n_commits):
        for _ in range(min(40, int(r.expovariate(0.25)) + 1)):
            path = files[bisect.bisect(cumulative, r.random() * total)]
            if added[path] < c:
                ops[c].append(("M", path))

    # --- article targets -------------------------------------------------------------------
    m = args.articles
    dir_set = {p[:i] for p in files for i in range(len(p)) if p[i] == "/"}
    by_address: dict[str, list[str]] = {}
    for path in files:
        by_address.setdefault(address_of(path), []).append(path)
    n_orphan = max(1, m * 2 // 100)
    n_rule = max(1, m // 100)
    n_dir = m * 25 // 100
    n_file = m - n_orphan - n_rule - n_dir
    files_per_dir: dict[str, int] = {}
    for path in files:
        d = path.rpartition("/")[0]
        files_per_dir[d] = files_per_dir.get(d, 0) + 1
    # an orphan: its only asset is deleted while its directory keeps other files
    orphan_pool = [
        p
        for p in files
        if len(by_address[address_of(p)]) == 1
        and address_of(p) not in dir_set
        and files_per_dir[p.rpartition("/")[0]] > 3
    ]
    orphans = r.sample(orphan_pool, min(n_orphan, len(orphan_pool)))
    orphan_set = set(orphans)
    targets: dict[str, str] = {}  # address -> kind
    for p in r.sample(files, min(len(files), n_file * 2)):
        if len(targets) >= n_file:
            break
        if p not in orphan_set:
            targets.setdefault(address_of(p), "file")
    for d in r.sample(sorted(dir_set), min(len(dir_set), n_dir)):
        targets.setdefault(d, "dir")
    for p in orphans:
        targets.setdefault(address_of(p), "orphan")
    for i in range(n_rule):
        targets.setdefault(f"conventions/{r.choice(NOUNS)}-{i}", "rule")
    addresses = list(targets)

    deleted_at: dict[str, int] = {}
    for p in orphans:
        if added[p] >= n_commits - 1:  # added by the last commit: nothing left to delete it in
            ops[added[p]].remove(("M", p))
            added[p] = r.randrange(1, n_commits - 1)
            ops[added[p]].append(("M", p))
        c = r.randrange(max(added[p] + 1, n_commits // 2), n_commits)
        deleted_at[p] = c
        ops[c].append(("D", p))
    for c, lst in enumerate(ops):  # nothing touches a file after its deletion
        ops[c] = [
            (k, p) for k, p in lst if not (k == "M" and p in deleted_at and c >= deleted_at[p])
        ]
    last: dict[str, int] = {}
    for c, lst in enumerate(ops):
        for k, p in lst:
            if k == "M":
                last[p] = c
    live = [p for p in files if p not in deleted_at]

    # governed files per article (SPEC §9): the exact-address files, plus files below a directory
    # article with no nearer article (file/directory collisions: the union of both)
    article_set = set(addresses)
    newest: dict[str, int] = {}
    for p in live:
        a = address_of(p)
        while a and a not in article_set:
            a = a.rpartition("/")[0]
        if a and newest.get(a, -1) < last[p]:
            newest[a] = last[p]
        exact = address_of(p)
        if exact in article_set and exact != a:  # cannot happen: exact wins the walk
            raise AssertionError(exact)

    article_commit: dict[str, int] = {}
    for a in addresses:
        asset_last = newest.get(a)
        if asset_last is not None and asset_last > 1 and r.random() < 0.15:
            c = r.randrange(1, asset_last)  # written before the asset's last change: stale
        else:
            c = r.randrange(asset_last if asset_last is not None else 1, n_commits)
        article_commit[a] = c

    # --- article and journal text ------------------------------------------------------------
    docs: dict[str, bytes] = {}
    truth_stale: list[str] = []
    truth_orphan: list[str] = sorted(
        a for a, k in targets.items() if k == "orphan" and a.rpartition("/")[0] in dir_set
    )
    for a in addresses:
        lang = r.choices(("en", "zh", "mixed"), (75, 12, 13))[0]
        links = []
        for _ in range(min(8, int(r.expovariate(0.4)))):
            if r.random() < 0.03:
                links.append(f"{a.rpartition('/')[0] or 'x'}/missing-{r.choice(NOUNS)}")
            else:
                links.append(r.choice(addresses))
        updated = utc_day(times[article_commit[a]])
        cap = text.capsule(lang)
        if ": " in cap or " #" in cap:
            cap = json.dumps(cap, ensure_ascii=False)  # a YAML double-quoted scalar
        fm = [f"capsule: {cap}", f"updated: {updated}"]
        reference = updated
        if targets[a] == "rule":
            fm.append("scope: rule")
        if r.random() < 0.05:
            reference = max(updated, utc_day(times[r.randrange(n_commits)]))
            fm.append(f"reviewed: {reference}")
        stale_after = ""
        if r.random() < 0.01:
            stale_after = r.choice(("2024-03-01", "2099-01-01"))
            fm.append(f"stale_after: {stale_after}")
        if r.random() < 0.4:
            fm.append("tags: [" + ", ".join(r.sample(NOUNS, r.randint(1, 3))) + "]")
        asset_last = newest.get(a)
        if (asset_last is not None and utc_day(times[asset_last]) > reference) or (
            stale_after and stale_after <= TODAY
        ):
            truth_stale.append(a)
        title = a.rsplit("/", 1)[-1]
        docs[a] = ("---\n" + "\n".join(fm) + "\n---\n" + text.body(lang, title, links)).encode()
        ops[article_commit[a]].append(("A", a))
    entries: dict[str, bytes] = {}
    n_journal = args.journal if args.journal is not None else m // 2
    sources = ("cli", "mcp", "lsp", "claude-code", "codex")
    for j in range(n_journal):
        c = r.randrange(1, n_commits)
        subject = r.sample(addresses, min(len(addresses), r.randint(0, 3)))
        name = f"{utc_day(times[c])}-{r.choice(NOUNS)}-{r.choice(NOUNS)}-{j}"
        fm = [f"date: {utc_day(times[c])}", f"source: {r.choice(sources)}"]
        if subject:
            fm.append("subject: [" + ", ".join(subject) + "]")
        lang_zh = r.random() < 0.15
        body = "\n\n".join(text.zh() if lang_zh else text.en() for _ in range(r.randint(1, 4)))
        entries[name] = ("---\n" + "\n".join(fm) + "\n---\n" + body + "\n").encode()
        ops[c].append(("J", name))

    # --- one fast-import stream --------------------------------------------------------------
    git = ["git", "-C", repo]
    subprocess.run(["git", "init", "-q", "-b", "main", repo], check=True)
    subprocess.run([*git, "config", "user.email", "gen@example.invalid"], check=True)
    subprocess.run([*git, "config", "user.name", "gen"], check=True)
    proc = subprocess.Popen([*git, "fast-import", "--quiet", "--done"], stdin=subprocess.PIPE)
    assert proc.stdin is not None
    w = io.BufferedWriter(proc.stdin, buffer_size=1 << 20)  # type: ignore[arg-type]
    revision: dict[str, int] = {}
    for c in range(n_commits):
        who = r.choice(PEOPLE)
        ident = f"{who} <{who.lower().replace(' ', '.')}@example.invalid> {times[c]} +0000"
        w.write(
            f"commit refs/heads/main\nmark :{c + 1}\nauthor {ident}\ncommitter {ident}\n".encode()
        )
        blob(w, f"{r.choice(VERBS)} {r.choice(NOUNS)} (#{c})\n".encode())
        if c:
            w.write(b"from :%d\n" % c)
        if not ops[c]:
            ops[c].append(("N", "NOTES.md"))
        for kind, p in ops[c]:
            if kind == "M":
                revision[p] = revision.get(p, 0) + 1
                w.write(f"M 100644 inline {p}\n".encode())
                blob(w, source_text(r, p, revision[p]))
            elif kind == "D":
                w.write(f"D {p}\n".encode())
            elif kind == "A":
                w.write(f"M 100644 inline .canon/articles/{p}.md\n".encode())
                blob(w, docs[p])
            elif kind == "J":
                w.write(f"M 100644 inline .canon/journal/{p}.md\n".encode())
                blob(w, entries[p])
            else:
                w.write(b"M 100644 inline NOTES.md\n")
                blob(w, f"note {c}\n".encode())
        w.write(b"\n")
    w.write(b"done\n")
    w.close()
    if proc.wait() != 0:
        sys.exit("git fast-import failed")
    schema = {"schema_version": 1, "article": {"capsule": {"max_chars": 1000}}}
    subprocess.run([*git, "checkout", "-q", "-f", "main"], check=True)
    with open(os.path.join(repo, ".canon", "schema.json"), "w", encoding="utf-8") as f:
        json.dump(schema, f)
    subprocess.run([*git, "add", ".canon/schema.json"], check=True)
    stamp = f"{times[-1]} +0000"
    env = dict(os.environ, GIT_COMMITTER_DATE=stamp, GIT_AUTHOR_DATE=stamp)
    subprocess.run([*git, "commit", "-q", "-m", "schema"], check=True, env=env)
    packed = time.perf_counter()
    subprocess.run([*git, "repack", "-a", "-d", "-f", "-q"], check=True)  # like a clone: see top
    repack_seconds = time.perf_counter() - packed

    manifest = {
        "files": len(live),
        "articles": len(addresses),
        "journal": n_journal,
        "commits": n_commits + 1,
        "today": TODAY,
        "kinds": {
            k: sum(1 for v in targets.values() if v == k) for k in ("file", "dir", "orphan", "rule")
        },
        "orphaned": truth_orphan,
        "stale": sorted(truth_stale),
        "seconds": round(time.perf_counter() - started, 1),
        "repack_seconds": round(repack_seconds, 1),
    }
    with open(os.path.join(out, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, ensure_ascii=False, indent=1)
    queries = [{"lang": "en", "q": " ".join(r.sample(NOUNS, r.randint(1, 3)))} for _ in range(100)]
    for _ in range(60):
        s = text.zh()
        i = r.randrange(max(1, len(s) - 5))
        queries.append({"lang": "zh", "q": s[i : i + r.randint(2, 6)]})
    for _ in range(40):
        queries.append({"lang": "mixed", "q": r.choice(NOUNS) + " " + text.zh()[: r.randint(2, 4)]})
    with open(os.path.join(out, "queries.json"), "w", encoding="utf-8") as f:
        json.dump(queries, f, ensure_ascii=False, indent=0)
    summary = {k: v for k, v in manifest.items() if k not in ("orphaned", "stale")}
    summary |= {"orphaned": len(truth_orphan), "stale": len(truth_stale)}
    print(json.dumps(summary, ensure_ascii=False))


if __name__ == "__main__":
    main()
