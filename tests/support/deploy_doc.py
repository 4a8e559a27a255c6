"""docs/deploy.md read as data: its fenced blocks (the course recipe, the service units, the nginx server
block, the Compose file and its Dockerfile), so that the tests run and check what the document says, and
the two cannot drift apart."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "deploy.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.S | re.M)


@dataclass(frozen=True)
class Block:
    heading: str   # the nearest heading above it
    lang: str
    body: str


def blocks(text: str | None = None) -> list[Block]:
    text = DOC.read_text() if text is None else text
    found, heading, at = [], "", 0
    for m in FENCE.finditer(text):
        headings = re.findall(r"^#+ (.+)$", text[at:m.start()], re.M)   # (the prose between blocks)
        heading = headings[-1] if headings else heading
        found.append(Block(heading, m.group(1), m.group(2)))
        at = m.end()
    return found


def block(heading: str, lang: str, first_line: str = "") -> str:
    """The one block of `lang` under `heading` whose first line holds `first_line`."""
    (found,) = [b.body for b in blocks() if b.heading == heading and b.lang == lang
                and first_line in b.body.split("\n", 1)[0]]
    return found


def split_comment(line: str) -> tuple[str, str]:
    """A shell line's command and its trailing comment (an unquoted `#` after a space), both stripped."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].strip(), line[i + 1:].strip()
    return line.strip(), ""


@dataclass(frozen=True)
class Command:
    text: str        # the command, continuation lines joined, a here-document's lines after a newline
    comment: str     # what its comment says (the output to expect, where it shows one)
    step: str        # the numbered comment line above it ("1. PostgreSQL, Redis and nginx ...")


def commands(script: str) -> list[Command]:
    """A shell block's commands in order: comment lines name the step, a trailing backslash continues a line,
    `<<'EOF'` takes the lines up to EOF."""
    found, step, lines = [], "", script.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip():
            continue
        if line.lstrip().startswith("#"):
            m = re.match(r"#\s*(\d+b?\..*)", line.strip())
            step = m.group(1) if m else step
            continue
        text, comment = split_comment(line)
        while text.endswith("\\"):
            more, more_comment = split_comment(lines[i])
            i += 1
            text, comment = text[:-1].rstrip() + " " + more, more_comment or comment
        heredoc = re.search(r"<<'?(\w+)'?", text)
        if heredoc:
            body = []
            while lines[i] != heredoc.group(1):
                body.append(lines[i])
                i += 1
            i += 1
            text += "\n" + "\n".join(body) + "\n" + heredoc.group(1)
        found.append(Command(text, comment, step))
    return found


def unit(name: str) -> dict[str, list[str]]:
    """A systemd unit of the document (`/etc/systemd/system/NAME` on its first line): key -> values."""
    body = block("Service units (systemd)", "ini", f"/etc/systemd/system/{name} ")
    found: dict[str, list[str]] = {}
    for line in body.splitlines():
        if "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            found.setdefault(key.strip(), []).append(value.strip())
    return found


def units() -> dict[str, dict[str, list[str]]]:
    names = [re.search(r"/etc/systemd/system/(\S+)", b.body).group(1) for b in blocks()
             if b.heading == "Service units (systemd)" and b.lang == "ini"]
    return {name: unit(name) for name in names}


def recipe() -> list[Command]:
    return commands(block("The course recipe, step by step", "sh"))


def nginx_server_block() -> str:
    return block("A reverse proxy in front of the replicas", "nginx")


def compose() -> dict:
    import yaml

    return yaml.safe_load(block("The whole course on one machine with Docker Compose", "yaml"))


def dockerfile() -> str:
    return block("The whole course on one machine with Docker Compose", "dockerfile")
