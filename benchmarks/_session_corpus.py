"""A deterministic corpus of agent conversations for the session-store benchmark.

Sessions of about 20 messages: user questions, assistant answers (some with tool-call JSON),
tool results; 200-2,000 characters each; about 5% of messages in Chinese. Words follow a Zipf
law over a vocabulary of English, technical and hyphenated/dotted terms, so common words are
very common and rare ones rare, as in real transcripts. Stdlib only: both the original's
virtualenv and ours import it.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

BASE = """the of and to a in is it you that he was for on are with as I his they be at one have
this from or had by not word but what some we can out other were all there when up use your how
said an each she which do their time if will way about many then them write would like so these
her long make thing see him two has look more day could go come did number sound no most people
my over know water than call first who may down side been now find any new work part take get
place made live where after back little only round man year came show every good me give our
under name very through just form sentence great think say help low line differ turn cause much
mean before move right boy old too same tell does set three want air well also play small end put
home read hand port large spell add even land here must big high such follow act why ask men
change went light kind off need house picture try us again animal point mother world near build
self earth father head stand own page should country found answer school grow study still learn
plant cover food sun four between state keep eye never last let thought city tree cross farm hard
start might story saw far sea draw left late run while press close night real life few north open
seem together next white children begin got walk example ease paper group always music those both
mark often letter until mile river car feet care second book carry took science eat room friend
began idea fish mountain stop once base hear horse cut sure watch color face wood main enough
plain girl usual young ready above ever red list though feel talk bird soon body dog family direct
pose leave song measure door product black short numeral class wind question happen complete ship
area half rock order fire south problem piece told knew pass since top whole king space heard best
hour better true during hundred five remember step early hold west ground interest reach fast verb
sing listen six table travel less morning ten simple several vowel toward war lay against pattern
slow center love person money serve appear road map rain rule govern pull cold notice voice unit
power town fine certain fly fall lead cry dark machine note wait plan figure star box noun field
rest correct able pound done beauty drive stood contain front teach week final gave green oh quick
develop ocean warm free minute strong special mind behind clear tail produce fact street inch
multiply nothing course stay wheel full force blue object decide surface deep moon island foot
system busy test record boat common gold possible plane stead dry wonder laugh thousand ago ran
check game shape equate hot miss brought heat snow tire bring yes distant fill east paint language
among""".split()
TECH = """docker kubernetes python rust golang typescript javascript postgres sqlite redis nginx
terraform ansible pytest cargo npm pip venv git branch commit merge rebase deploy deployment
deployed container image cluster pod service ingress helm chart config yaml json toml schema
migration index query latency throughput cache memory thread async await future promise error
exception traceback stacktrace timeout retry backoff jitter lock mutex semaphore queue worker
scheduler cron webhook endpoint request response header token session cookie oauth jwt api sdk
client server socket port proxy tls certificate dns domain bucket storage backup restore snapshot
volume mount filesystem permission chmod sudo shell bash zsh terminal process signal sigkill
compile build release version tag changelog lint format refactor benchmark profile flamegraph
regression bisect fixture mock stub assertion coverage""".split()
COMPOUND = """chat-send config.yaml read-only user-agent pre-commit state.db node.js next.js
vue.js main.py setup.py package.json docker-compose.yml x-api-key rate-limit end-to-end
follow-up well-known built-in opt-in set-up log-in sign-up re-run""".split()
CJK_WORDS = """数据库 迁移 部署 服务器 容器 配置 文件 错误 日志 网络 请求 响应 缓存 内存 线程 进程
测试 代码 函数 变量 接口 用户 会话 消息 搜索 索引 查询 性能 优化 安全 权限 密码 证书 域名 版本
发布 分支 合并 提交 仓库 构建 编译 运行 调试 监控 告警 备份 恢复 快照 集群 节点 负载 均衡 今天
明天 问题 解决 方案 需要 可以 已经 完成 检查 更新 安装 卸载 重启 启动 停止 时间 天气 很好""".split()
TOOLS = ["terminal", "read_file", "write_file", "web_search", "search_files", "patch",
         "browser_navigate", "execute_code", "memory", "session_search"]
SOURCES = ["cli"] * 6 + ["telegram"] * 2 + ["discord", "cron"]


def _zipf_weights(n: int, s: float = 1.05) -> list[float]:
    return [1.0 / (i + 1) ** s for i in range(n)]


@dataclass
class Corpus:
    seed: int = 7
    rng: random.Random = field(init=False)
    vocab: list[str] = field(init=False)
    cum: list[float] = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        words = BASE + TECH + COMPOUND
        random.Random(1).shuffle(words)
        self.vocab = words
        total, acc = 0.0, []
        for w in _zipf_weights(len(words)):
            total += w
            acc.append(total)
        self.cum = acc

    def word(self) -> str:
        import bisect

        return self.vocab[bisect.bisect_left(self.cum, self.rng.random() * self.cum[-1])]

    def english(self, n_chars: int) -> str:
        out, size = [], 0
        while size < n_chars:
            sentence = " ".join(self.word() for _ in range(self.rng.randint(6, 16)))
            sentence = sentence[0].upper() + sentence[1:] + self.rng.choice(".?.!.")
            out.append(sentence)
            size += len(sentence) + 1
        return " ".join(out)[:n_chars]

    def chinese(self, n_chars: int) -> str:
        out, size = [], 0
        while size < n_chars:
            piece = "".join(self.rng.choice(CJK_WORDS) for _ in range(self.rng.randint(3, 8)))
            piece += self.rng.choice("，。？")
            out.append(piece)
            size += len(piece)
        return "".join(out)[:n_chars]

    def text(self, lo: int, hi: int) -> str:
        n = self.rng.randint(lo, hi)
        return self.chinese(n // 2) if self.rng.random() < 0.05 else self.english(n)

    def tool_call(self, i: int) -> list[dict[str, Any]]:
        name = self.rng.choice(TOOLS)
        args = {"query" if name.endswith("search") else "command": self.english(60),
                "path": f"/srv/app/{self.word()}/{self.word()}.py"}
        return [{"id": f"call_{i}", "type": "function",
                 "function": {"name": name, "arguments": json.dumps(args)}}]

    def messages(self, count: int, per_session: int = 20) -> Iterator[tuple[str, dict[str, Any]]]:
        """(session id, message kwargs) pairs; a new session every ``per_session`` messages."""
        for i in range(count):
            sid = f"bench_{i // per_session:07d}"
            k = i % per_session
            if k % 3 == 0:
                yield sid, {"role": "user", "content": self.text(200, 700)}
            elif k % 3 == 1:
                if self.rng.random() < 0.5:
                    yield sid, {"role": "assistant", "content": self.text(200, 600),
                                "tool_calls": self.tool_call(i)}
                else:
                    yield sid, {"role": "assistant", "content": self.text(400, 2000)}
            else:
                yield sid, {"role": "tool", "content": self.text(200, 2000),
                            "tool_name": self.rng.choice(TOOLS), "tool_call_id": f"call_{i - 1}"}

    def queries(self, kind: str, n: int) -> list[str]:
        """``n`` queries of one kind, drawn from the corpus vocabulary."""
        rng = random.Random(f"{self.seed}-{kind}")
        pick = lambda: rng.choice(self.vocab[: len(self.vocab) // 2])  # noqa: E731
        cjk2 = [w for w in CJK_WORDS if len(w) == 2]
        cjk3 = [a + b for a in CJK_WORDS for b in CJK_WORDS if len(a + b) >= 3][:400]
        make = {
            "word": lambda: pick(),
            "two words": lambda: f"{pick()} {pick()}",
            "phrase": lambda: f'"{pick()} {pick()}"',
            "OR": lambda: f"{pick()} OR {pick()}",
            "prefix": lambda: pick()[:3] + "*",
            "hyphenated": lambda: rng.choice(COMPOUND),
            "CJK 3+ chars": lambda: rng.choice(cjk3),
            "CJK 2 chars": lambda: rng.choice(cjk2),
        }[kind]
        return [make() for _ in range(n)]


QUERY_KINDS = ("word", "two words", "phrase", "OR", "prefix", "hyphenated", "CJK 3+ chars",
               "CJK 2 chars")


def _two_letters(n: int) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return [a + b for a in letters for b in letters][:n]


# Queries an attacker would send to make a search slow (and, in a store that searches under
# its write lock, to block appends meanwhile).
CRAFTED_QUERIES = {
    "300 one-letter prefixes": " ".join(f"{c}*" for c in "abcdefghijklmnopqrstuvwxyz" * 12)[:900],
    "300 two-letter prefixes": " ".join(f"{p}*" for p in _two_letters(300)),
    "200 two-char CJK terms OR": " OR ".join(
        [w for w in CJK_WORDS if len(w) == 2][:40] * 5),
    "16 rare two-char CJK terms OR": " OR ".join(
        ["龙虎", "鳄鱼", "鲸鲨", "鹦鹉", "熊猫", "狐狸", "松鼠", "刺猬"] * 2),
    "CJK character AND absent word, OR x8": " OR ".join(f"数 zz{i}" for i in range(8)),
    "common words OR x16": " OR ".join(BASE[:16]),
}
