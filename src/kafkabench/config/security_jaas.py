"""Java's `sasl.jaas.config` read the way Kafka's JaasConfig reads it, so the username and password it holds can
be handed to the clients that take them as separate settings (librdkafka's `sasl.username`, the Python
clients' `sasl_plain_username`).

The text is one login module: `CLASS FLAG key=value ... ;`, FLAG one of required, requisite, sufficient,
optional; values bare words or double-quoted with backslash escapes (`password="a\\"b"`), options in any
order. The text holds a password, so no error here ever quotes it: a refusal says where it went wrong by
position in the grammar, not by content.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kafkabench.errors import ConfigError

FLAGS = ("required", "requisite", "sufficient", "optional")

_TOKEN = re.compile(r'\s*(?:(?P<quoted>"(?:[^"\\]|\\.)*")|(?P<punct>[=;])|(?P<word>[^\s=;"]+))', re.DOTALL)
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)


@dataclass(frozen=True)
class JaasLogin:
    module: str  # the login module class, e.g. org.apache.kafka.common.security.scram.ScramLoginModule
    flag: str
    options: dict[str, str] = field(default_factory=dict)

    @property
    def username(self) -> str | None:
        return self.options.get("username")

    @property
    def password(self) -> str | None:
        return self.options.get("password")


def parse_jaas(text: str, key: str = "sasl.jaas.config") -> JaasLogin:
    """One login module, as the Java client requires; a ConfigError naming `key` (never the text) otherwise."""
    tokens = _tokens(text, key)
    if len(tokens) < 3 or tokens[0][0] != "word" or tokens[1][0] != "word":
        raise _unparsable(key, "expected `LoginModuleClass required key=\"value\" ... ;`")
    module, flag = tokens[0][1], tokens[1][1]
    if flag.lower() not in FLAGS:
        raise _unparsable(key, f"the second word must be a control flag ({', '.join(FLAGS)})")
    options: dict[str, str] = {}
    position = 2
    while position < len(tokens) and tokens[position] != ("punct", ";"):
        name, equals, value = (tokens[position:position + 3] + [("", "")] * 3)[:3]
        if name[0] != "word" or equals != ("punct", "=") or value[0] not in ("word", "quoted"):
            raise _unparsable(key, f"option {len(options) + 1} is not key=value")
        options[name[1]] = _unquoted(value)
        position += 3
    if position >= len(tokens):
        raise _unparsable(key, "it does not end with ';'")
    if position + 1 < len(tokens):
        raise _unparsable(key, "it holds more than one login module; the Kafka client takes one")
    return JaasLogin(module, flag.lower(), options)


def _tokens(text: str, key: str) -> list[tuple[str, str]]:
    tokens, position = [], 0
    while position < len(text):
        if text[position:].strip() == "":
            break
        match = _TOKEN.match(text, position)
        if match is None:  # an unterminated quote: the rest cannot be read
            raise _unparsable(key, "a quoted value is not closed")
        kind = match.lastgroup or "word"
        tokens.append((kind, match[kind]))
        position = match.end()
    return tokens


def _unquoted(token: tuple[str, str]) -> str:
    kind, text = token
    return _ESCAPE.sub(r"\1", text[1:-1]) if kind == "quoted" else text


def _unparsable(key: str, why: str) -> ConfigError:
    return ConfigError(f"{key} cannot be parsed: {why} (its text is not shown: it holds a password)")
