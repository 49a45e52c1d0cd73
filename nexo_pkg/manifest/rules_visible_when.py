"""Parser of the admin UI ``visible_when`` expressions, with the daemon's grammar and limits.

Grammar (``visible_when.rs`` in the reference crate)::

    or      := and ('||' and)*
    and     := cmp ('&&' cmp)*
    cmp     := unary (('==' | '!=' | '<' | '>' | '<=' | '>=') unary)?
    unary   := '!'? primary
    primary := variable | literal | '(' or ')'

Variables are ``[A-Za-z_][A-Za-z0-9_.]*`` with no empty dotted segment; ``true``/``false`` are
keywords; numbers are an optional ``-`` then digits and dots that parse as a float; strings are
single- or double-quoted and may not hold a line feed. An expression is at most 200 bytes and its
syntax tree at most 5 levels deep (a leaf is depth 1; binary operators nest to the left).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MAX_DEPTH", "VisibleWhenError", "check_visible_when"]

MAX_LEN = 200
MAX_DEPTH = 5

_BLANKS = " \t\n\r"
"""What the daemon's lexer skips between tokens: space, tab, newline, carriage return only."""

_COMPARISONS = ("==", "!=", "<=", ">=", "<", ">")


class VisibleWhenError(ValueError):
    """An expression the daemon refuses; the message is the daemon's reason text."""


@dataclass(frozen=True)
class _Token:
    kind: str  # "op", "var", "bool", "num", "str"
    text: str
    offset: int


def _syntax(detail: str) -> VisibleWhenError:
    return VisibleWhenError(f"visible_when syntax error: {detail}")


def _tokenize(source: str) -> list[_Token]:
    tokens: list[_Token] = []
    index = 0
    length = len(source)
    while index < length:
        char = source[index]
        if char in _BLANKS:
            index += 1
            continue
        two = source[index : index + 2]
        if two in ("==", "!=", "<=", ">=", "&&", "||"):
            tokens.append(_Token("op", two, index))
            index += 2
            continue
        if char in "()!<>":
            tokens.append(_Token("op", char, index))
            index += 1
            continue
        if char == "=":
            raise _syntax("expected `==`")
        if char in "\"'":
            end = index + 1
            while end < length and source[end] != char:
                if source[end] == "\n":  # the daemon keeps a carriage return in the string
                    raise _syntax("newline inside string literal")
                end += 1
            if end >= length:
                raise _syntax("unterminated string literal")
            tokens.append(_Token("str", source[index + 1 : end], index))
            index = end + 1
            continue
        if char == "-" or (char.isascii() and char.isdigit()):
            end = index + 1
            if char == "-" and not (
                end < length and source[end].isascii() and source[end].isdigit()
            ):
                raise _syntax("`-` not followed by a digit")
            while end < length and (
                source[end] == "." or (source[end].isascii() and source[end].isdigit())
            ):
                end += 1
            text = source[index:end]
            try:
                float(text)
            except ValueError:
                raise _syntax(f"invalid number `{text}`") from None
            tokens.append(_Token("num", text, index))
            index = end
            continue
        if char.isascii() and (char.isalpha() or char == "_"):
            end = index + 1
            while (
                end < length
                and source[end].isascii()
                and (source[end].isalnum() or source[end] in "_.")
            ):
                end += 1
            text = source[index:end]
            if "" in text.split("."):
                raise _syntax(f"invalid variable path `{text}`")
            tokens.append(_Token("bool" if text in ("true", "false") else "var", text, index))
            index = end
            continue
        raise _syntax(f"unexpected character `{char}`")
    return tokens


class _Parser:
    """Recursive descent over the tokens; each method returns the depth of what it parsed."""

    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = tokens
        self.position = 0

    def _peek(self) -> _Token | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def _eat(self, *texts: str) -> _Token | None:
        token = self._peek()
        if token is not None and token.kind == "op" and token.text in texts:
            self.position += 1
            return token
        return None

    def parse(self) -> int:
        depth = self._or()
        token = self._peek()
        if token is not None:
            raise _syntax(f"unexpected trailing token at {token.offset}")
        return depth

    def _or(self) -> int:
        depth = self._and()
        while self._eat("||"):
            depth = 1 + max(depth, self._and())
        return depth

    def _and(self) -> int:
        depth = self._comparison()
        while self._eat("&&"):
            depth = 1 + max(depth, self._comparison())
        return depth

    def _comparison(self) -> int:
        depth = self._unary()
        if self._eat(*_COMPARISONS):
            depth = 1 + max(depth, self._unary())
        return depth

    def _unary(self) -> int:
        return 1 + self._primary() if self._eat("!") else self._primary()

    def _primary(self) -> int:
        token = self._peek()
        if token is None:
            raise _syntax("unexpected end of expression")
        if token.kind != "op":
            self.position += 1
            return 1
        if token.text == "(":
            self.position += 1
            depth = self._or()
            if not self._eat(")"):
                raise _syntax("expected `)`")
            return depth
        raise _syntax(f"unexpected token `{token.text}` at {token.offset}")


def check_visible_when(expression: str) -> None:
    """Raise :class:`VisibleWhenError` if the daemon would refuse ``expression``.

    Checks, in the daemon's order: the 200-byte limit, the syntax, then the depth limit.
    """
    size = len(expression.encode("utf-8"))
    if size > MAX_LEN:
        raise VisibleWhenError(f"visible_when expression exceeds {MAX_LEN} chars (got {size})")
    depth = _Parser(_tokenize(expression)).parse()
    if depth > MAX_DEPTH:
        raise VisibleWhenError(f"visible_when AST depth exceeds {MAX_DEPTH}")
